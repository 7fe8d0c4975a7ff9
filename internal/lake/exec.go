package lake

import (
	"fmt"
	"strconv"
)

// resultCol describes one output column as RowDescription carries it.
type resultCol struct {
	name     string
	t        Type
	tableOID uint32
	attnum   int16
}

// result is what a handler produced: rows (when cols is not nil), the
// command tag and any notices sent before it.
type result struct {
	cols    []resultCol
	rows    [][]Value
	count   int // rows produced (also those given to a sink)
	tag     string
	notices []notice
}

// notice is a NoticeResponse: NOTICE or WARNING with its SQLSTATE.
type notice struct {
	severity, code, msg string
}

func (x *txn) binder(scope []scopeRel) *binder {
	return &binder{scope: scope, sub: x.maxSub, now: x.now}
}

// maxSub evaluates (SELECT MAX(col) FROM rel).
func (x *txn) maxSub(m eMaxSub) (Value, error) {
	t, err := x.table(m.rel)
	if err != nil {
		return Value{}, err
	}
	c := t.col(m.col)
	if c < 0 {
		return Value{}, errorf(codeUndefinedColumn, "column %q does not exist", m.col)
	}
	rows, err := x.rows(t)
	if err != nil {
		return Value{}, err
	}
	best := nullOf(t.Cols[c].Type)
	for _, r := range rows {
		v := r.vals[c]
		if !v.Null && (best.Null || compare(v, best) > 0) {
			best = v
		}
	}
	return best, nil
}

// runSelect runs a scan; the result holds its rows.
func (x *txn) runSelect(p *selectPlan) (*result, error) {
	return x.runSelectInto(p, nil)
}

// rowSink receives each row of a scan as it is produced. The slice and
// the strings of its values are valid only during the call (they may
// point into the stored record): a sink copies what it keeps.
type rowSink func(row []Value) error

// runSelectInto runs a scan. With a sink the rows go to it, one at a
// time, and are not kept (the result's count says how many); without
// one they are collected in the result.
func (x *txn) runSelectInto(p *selectPlan, sink rowSink) (*result, error) {
	var scope scopeRel
	var input []storedRow
	var origin []resultCol // where each input column comes from
	var base *Table        // the table scanned, when there is no subquery
	if p.sub != nil {
		inner, err := x.runSelect(p.sub)
		if err != nil {
			return nil, err
		}
		scope = scopeRel{name: p.alias}
		for _, c := range inner.cols {
			scope.cols = append(scope.cols, Column{Name: c.name, Type: c.t})
		}
		origin = inner.cols
		for _, r := range inner.rows {
			input = append(input, storedRow{vals: r})
		}
	} else {
		t, err := x.table(p.from)
		if err != nil {
			return nil, err
		}
		base = t
		scope = scopeRel{name: p.alias, cols: t.Cols, hasCtid: true}
		for i, c := range t.Cols {
			origin = append(origin, resultCol{name: c.Name, t: c.Type, tableOID: t.OID, attnum: int16(i + 1)})
		}
	}
	targets := p.targets
	if targets == nil {
		for _, c := range scope.cols {
			targets = append(targets, target{e: eCol{name: c.Name}, name: c.Name})
		}
	}
	b := x.binder([]scopeRel{scope})
	res := &result{}
	var bound []expr
	for _, t := range targets {
		e, err := b.bind(t.e)
		if err != nil {
			return nil, err
		}
		col := resultCol{name: t.name, t: exprType(e)}
		if s, ok := e.(eSlot); ok {
			if s.col >= 0 {
				o := origin[s.col]
				col.tableOID, col.attnum = o.tableOID, o.attnum
			} else if len(origin) > 0 {
				col.tableOID, col.attnum = origin[0].tableOID, -1
			}
		}
		if col.t == TUnknown {
			col.t = TText // an untyped NULL output column resolves to text
			e = eConst{v: nullOf(TText)}
		}
		bound = append(bound, e)
		res.cols = append(res.cols, col)
	}
	where, err := b.bind(p.where)
	if err != nil {
		return nil, err
	}
	// direct[i] is the input column output i copies, -1 when it is
	// evaluated (ctid, a constant, a cast).
	direct := make([]int, len(bound))
	for i, e := range bound {
		direct[i] = -1
		if s, ok := e.(eSlot); ok && s.rel == 0 && s.col >= 0 {
			direct[i] = s.col
		}
	}
	er := &evalRow{vals: make([][]Value, 1), tids: make([]int64, 1)}
	seen := 0
	var sinkRow []Value // the row handed to the sink, reused
	if sink != nil {
		sinkRow = make([]Value, len(bound))
	}
	// emit filters and projects one input row; it says whether to go on.
	emit := func(vals []Value, tid int64, decodeRest func() error) (bool, error) {
		if err := x.scanCheck(seen); err != nil {
			return false, err
		}
		seen++
		if p.limit >= 0 && int64(res.count) >= p.limit {
			return false, nil
		}
		er.vals[0], er.tids[0] = vals, tid
		ok, err := truth(where, er)
		if err != nil || !ok {
			return err == nil, err
		}
		if decodeRest != nil {
			if err := decodeRest(); err != nil {
				return false, err
			}
		}
		out := sinkRow
		if sink == nil {
			out = make([]Value, len(bound))
		}
		for i, e := range bound {
			if c := direct[i]; c >= 0 {
				out[i] = vals[c]
				continue
			}
			if out[i], err = eval(e, er); err != nil {
				return false, err
			}
		}
		res.count++
		if sink != nil {
			return true, sink(out)
		}
		res.rows = append(res.rows, out)
		return true, nil
	}
	switch {
	case base != nil && !x.touched(base):
		// The common case, a table the transaction has not written: the
		// columns the filter needs are decoded first, the others only for
		// rows that pass it.
		whereNeed := make([]bool, len(base.Cols))
		outNeed := make([]bool, len(base.Cols))
		slotsOf(where, whereNeed)
		for _, e := range bound {
			slotsOf(e, outNeed)
		}
		for i := range outNeed {
			outNeed[i] = outNeed[i] && !whereNeed[i]
		}
		buf := make([]Value, len(base.Cols))
		// A sink sees each row before the next is read, so the text of
		// its values may point into the record.
		alias := sink != nil
		visit := func(tid int64, rec []byte) (bool, error) {
			if err := decodeRowAlias(rec, base.Cols, whereNeed, buf, alias); err != nil {
				return false, fmt.Errorf("table %s row %s: %w", base.Name, tidText(tid), err)
			}
			return emit(buf, tid, func() error {
				if err := decodeRowAlias(rec, base.Cols, outNeed, buf, alias); err != nil {
					return fmt.Errorf("table %s row %s: %w", base.Name, tidText(tid), err)
				}
				return nil
			})
		}
		if probe, ok := probeFor(base, where); ok {
			err = x.store.scanIndex(base, probe, x.rev, func(tid int64, _ uint64, rec []byte) (bool, error) { return visit(tid, rec) })
		} else {
			err = x.store.scanRaw(base, x.rev, visit)
		}
	case base != nil:
		if input, err = x.rows(base); err != nil {
			return nil, err
		}
		fallthrough
	default:
		for _, r := range input {
			var more bool
			if more, err = emit(r.vals, r.tid, nil); err != nil || !more {
				break
			}
		}
	}
	if err != nil {
		return nil, err
	}
	res.tag = "SELECT " + strconv.Itoa(res.count)
	return res, nil
}

// slotsOf marks the columns of relation 0 that e reads.
func slotsOf(e expr, need []bool) {
	switch e := e.(type) {
	case eSlot:
		if e.rel == 0 && e.col >= 0 {
			need[e.col] = true
		}
	case eCast:
		slotsOf(e.e, need)
	case eCmp:
		slotsOf(e.l, need)
		slotsOf(e.r, need)
	case eBool:
		for _, a := range e.args {
			slotsOf(a, need)
		}
	case eNot:
		slotsOf(e.e, need)
	case eNullTest:
		slotsOf(e.e, need)
	case eIn:
		slotsOf(e.e, need)
		for _, a := range e.list {
			slotsOf(a, need)
		}
	case eBetween:
		slotsOf(e.e, need)
		slotsOf(e.lo, need)
		slotsOf(e.hi, need)
	}
}

// constValues evaluates a VALUES list of constants and gives each
// column one type, as PostgreSQL resolves VALUES: integers widen to
// bigint, integers and floats to double precision, untyped literals
// alone to text.
func (x *txn) constValues(rows [][]expr) ([][]Value, []Type, error) {
	b := x.binder(nil)
	out := make([][]Value, len(rows))
	for i, row := range rows {
		out[i] = make([]Value, len(row))
		for j, e := range row {
			be, err := b.bind(e)
			if err != nil {
				return nil, nil, err
			}
			v, err := eval(be, &evalRow{})
			if err != nil {
				return nil, nil, err
			}
			out[i][j] = v
		}
	}
	if len(out) == 0 {
		return out, nil, nil
	}
	typesOut := make([]Type, len(out[0]))
	for j := range typesOut {
		t := TUnknown
		for i := range out {
			v := out[i][j]
			if v.T == TUnknown {
				continue
			}
			switch {
			case t == TUnknown:
				t = v.T
			case t == v.T:
			case t.isInt() && v.T.isInt():
				if v.T == TInt8 || t == TInt8 {
					t = TInt8
				}
			case isNumber(t) && isNumber(v.T):
				t = TFloat8
			default:
				return nil, nil, errorf(codeDatatypeMismatch, "VALUES types %s and %s cannot be matched", types[t].sql, types[v.T].sql)
			}
		}
		if t == TUnknown {
			t = TText
		}
		typesOut[j] = t
		for i := range out {
			v, err := castValue(out[i][j], t, false)
			if err != nil {
				return nil, nil, err
			}
			out[i][j] = v
		}
	}
	return out, typesOut, nil
}

func (x *txn) runInsert(p *insertPlan) (*result, error) {
	t, err := x.table(p.rel)
	if err != nil {
		return nil, err
	}
	idx, err := targetColumns(t, p.cols)
	if err != nil {
		return nil, err
	}
	b := x.binder(nil)
	for _, row := range p.rows {
		if len(row) > len(idx) {
			return nil, errorf(codeSyntax, "INSERT has more expressions than target columns")
		}
		vals := make([]Value, len(t.Cols))
		for i, c := range t.Cols {
			vals[i] = nullOf(c.Type)
		}
		for j, e := range row {
			be, err := b.bind(e)
			if err != nil {
				return nil, err
			}
			v, err := eval(be, &evalRow{})
			if err != nil {
				return nil, err
			}
			c := idx[j]
			if vals[c], err = assign(v, t.Cols[c]); err != nil {
				return nil, err
			}
		}
		if err := x.insert(t, vals); err != nil {
			return nil, err
		}
	}
	return &result{tag: fmt.Sprintf("INSERT 0 %d", len(p.rows))}, nil
}

// assign converts a value for storing in column c.
func assign(v Value, c Column) (Value, error) {
	out, err := castValue(v, c.Type, false)
	if se, ok := err.(*sqlError); ok && se.code == codeDatatypeMismatch {
		return Value{}, errorf(codeDatatypeMismatch, "column %q is of type %s but expression is of type %s",
			c.Name, types[c.Type].sql, types[v.T].sql)
	}
	return out, err
}

// targetColumns maps a column list (empty: all columns) to indexes.
func targetColumns(t *Table, cols []string) ([]int, error) {
	if len(cols) == 0 {
		idx := make([]int, len(t.Cols))
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	idx := make([]int, len(cols))
	seen := map[int]bool{}
	for i, name := range cols {
		c := t.col(name)
		if c < 0 {
			return nil, errorf(codeUndefinedColumn, "column %q of relation %q does not exist", name, t.Name)
		}
		if seen[c] {
			return nil, errorf("42701", "column %q specified more than once", name)
		}
		seen[c] = true
		idx[i] = c
	}
	return idx, nil
}

func (x *txn) runUpdate(p *updatePlan) (*result, error) {
	t, err := x.table(p.rel)
	if err != nil {
		return nil, err
	}
	scope := []scopeRel{{name: p.alias, cols: t.Cols, hasCtid: true}}
	var fromRows []storedRow
	switch {
	case p.values != nil:
		vals, ts, err := x.constValues(p.values.rows)
		if err != nil {
			return nil, err
		}
		rel := scopeRel{name: p.values.name}
		for i, name := range p.values.cols {
			rel.cols = append(rel.cols, Column{Name: name, Type: ts[i]})
		}
		scope = append(scope, rel)
		for _, v := range vals {
			fromRows = append(fromRows, storedRow{vals: v})
		}
	case p.fromRel != nil:
		ft, err := x.table(*p.fromRel)
		if err != nil {
			return nil, err
		}
		scope = append(scope, scopeRel{name: p.fromAlias, cols: ft.Cols, hasCtid: true})
		if fromRows, err = x.rows(ft); err != nil {
			return nil, err
		}
	default:
		fromRows = []storedRow{{}}
	}
	b := x.binder(scope)
	type boundSet struct {
		col int
		e   expr
	}
	var sets []boundSet
	for _, s := range p.sets {
		c := t.col(s.col)
		if c < 0 {
			return nil, errorf(codeUndefinedColumn, "column %q of relation %q does not exist", s.col, t.Name)
		}
		e, err := b.bind(s.e)
		if err != nil {
			return nil, err
		}
		sets = append(sets, boundSet{col: c, e: e})
	}
	where, err := b.bind(p.where)
	if err != nil {
		return nil, err
	}
	rows, err := x.candidates(t, where)
	if err != nil {
		return nil, err
	}
	n := 0
	er := &evalRow{vals: make([][]Value, len(scope)), tids: make([]int64, len(scope))}
	for _, r := range rows {
		er.vals[0], er.tids[0] = r.vals, r.tid
		for _, f := range fromRows {
			if len(scope) > 1 {
				er.vals[1], er.tids[1] = f.vals, f.tid
			}
			ok, err := truth(where, er)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			nv := append([]Value(nil), r.vals...)
			for _, s := range sets {
				v, err := eval(s.e, er)
				if err != nil {
					return nil, err
				}
				if nv[s.col], err = assign(v, t.Cols[s.col]); err != nil {
					return nil, err
				}
			}
			if err := x.remove(t, r); err != nil {
				return nil, err
			}
			if err := x.insert(t, nv); err != nil {
				return nil, err
			}
			n++
			break // a target row is updated at most once
		}
	}
	return &result{tag: "UPDATE " + strconv.Itoa(n)}, nil
}

func (x *txn) runDelete(p *deletePlan) (*result, error) {
	t, err := x.table(p.rel)
	if err != nil {
		return nil, err
	}
	where, err := x.binder([]scopeRel{{name: p.rel.name, cols: t.Cols, hasCtid: true}}).bind(p.where)
	if err != nil {
		return nil, err
	}
	rows, err := x.candidates(t, where)
	if err != nil {
		return nil, err
	}
	n := 0
	er := &evalRow{vals: make([][]Value, 1), tids: make([]int64, 1)}
	for _, r := range rows {
		er.vals[0], er.tids[0] = r.vals, r.tid
		ok, err := truth(where, er)
		if err != nil {
			return nil, err
		}
		if ok {
			if err := x.remove(t, r); err != nil {
				return nil, err
			}
			n++
		}
	}
	return &result{tag: "DELETE " + strconv.Itoa(n)}, nil
}

func (x *txn) runCreate(p *createPlan) (*result, error) {
	exists := false
	if p.temp {
		_, exists = x.temps[p.rel.name]
	} else {
		_, err := x.table(relRef{schema: normSchema(p.rel.schema), name: p.rel.name})
		exists = err == nil
	}
	if exists {
		if p.ifNotExists {
			return &result{tag: "CREATE TABLE", notices: []notice{{"NOTICE", codeDuplicateTable,
				fmt.Sprintf("relation %q already exists, skipping", p.rel.name)}}}, nil
		}
		return nil, errorf(codeDuplicateTable, "relation %q already exists", p.rel.name)
	}
	t := &Table{Schema: normSchema(p.rel.schema), Name: p.rel.name, Temp: p.temp}
	if p.temp {
		t.Schema = "pg_temp"
	} else if oid, ok := x.schemaOID(t.Schema); !ok || (oid != oidPublic && oid < firstOID) {
		return nil, errorf("3F000", "schema %q does not exist", p.rel.schema)
	}
	seen := map[string]bool{}
	for _, c := range p.cols {
		if seen[c.Name] {
			return nil, errorf("42701", "column %q specified more than once", c.Name)
		}
		seen[c.Name] = true
		t.Cols = append(t.Cols, c)
	}
	for _, k := range p.pk {
		c := t.col(k)
		if c < 0 {
			return nil, errorf(codeUndefinedColumn, "column %q named in key does not exist", k)
		}
		t.Cols[c].NotNull = true
		t.PK = append(t.PK, c)
	}
	if len(t.Cols) > 1600 {
		return nil, errorf("54011", "tables can have at most 1600 columns")
	}
	x.create(t)
	return &result{tag: "CREATE TABLE"}, nil
}

func (x *txn) runDrop(p *dropPlan) (*result, error) {
	res := &result{tag: "DROP TABLE"}
	var found []*Table
	for _, r := range p.rels {
		t, err := x.table(r)
		if err != nil {
			if p.missingOK {
				res.notices = append(res.notices, notice{"NOTICE", "00000", fmt.Sprintf("table %q does not exist, skipping", r.name)})
				continue
			}
			return nil, errorf(codeUndefinedTable, "table %q does not exist", r.name)
		}
		found = append(found, t)
	}
	for _, t := range found {
		x.drop(t)
	}
	return res, nil
}

// copyTarget resolves the table and columns of COPY ... FROM STDIN.
func (x *txn) copyTarget(p *copyInPlan) (*Table, []int, error) {
	t, err := x.table(p.rel)
	if err != nil {
		return nil, nil, err
	}
	idx, err := targetColumns(t, p.cols)
	return t, idx, err
}

// insertCopied stores rows read by COPY FROM: vals[i] fills column
// idx[i], the rest are NULL.
func (x *txn) insertCopied(t *Table, idx []int, rows [][]Value) error {
	for _, r := range rows {
		vals := make([]Value, len(t.Cols))
		for i, c := range t.Cols {
			vals[i] = nullOf(c.Type)
		}
		for i, c := range idx {
			vals[c] = r[i]
		}
		if err := x.insert(t, vals); err != nil {
			return err
		}
	}
	return nil
}
