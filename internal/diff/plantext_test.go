package diff

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// A small text syntax for plans, so that the golden scripts can build
// circuits by hand. One node per line, inputs indented under it:
//
//	aggregate group=(b) aggs=(sum(a), count(*), min(a) filter (a > 1), count(distinct a))
//	  filter a <> 0
//	    scan t
//
// Nodes: scan REL | filter EXPR | project EXPR [as NAME], ... |
// join [left|right|full|semi|anti|mark] [on (L = R, L <=> R, ...)]
// [where EXPR] [test EXPR] [single] | aggregate [group=(...)]
// [aggs=(...)] | distinct | union | values (v, ...), ... |
// sort EXPR [desc], ... | limit N; and (plantext_iterative_test.go)
// recursive NAME union [all] [limit N] | working NAME |
// tumble COL 'size' | hop COL 'slide' 'size'.
// Expressions: column names or #i, integer, decimal and 'string' literals,
// NULL, true, false, 'lit'::type, + - * / %, = <> < <= > >=,
// IS [NOT] NULL, AND, OR, NOT, parentheses, coalesce(...).

type planParser struct {
	tables map[string][]plan.Column
}

type planLine struct {
	indent int
	text   string
}

func (pp *planParser) parse(input string) (plan.Node, error) {
	var lines []planLine
	for _, l := range strings.Split(input, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := len(l) - len(strings.TrimLeft(l, " "))
		lines = append(lines, planLine{ind, strings.TrimSpace(l)})
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("empty plan")
	}
	n, rest, err := pp.node(lines)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("unexpected line %q", rest[0].text)
	}
	return n, nil
}

// node parses lines[0] and its children (the following lines indented
// deeper), returning the lines after them.
func (pp *planParser) node(lines []planLine) (plan.Node, []planLine, error) {
	head := lines[0]
	rest := lines[1:]
	var children []plan.Node
	for len(rest) > 0 && rest[0].indent > head.indent {
		c, r, err := pp.node(rest)
		if err != nil {
			return nil, nil, err
		}
		children = append(children, c)
		rest = r
	}
	n, err := pp.build(head.text, children)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", head.text, err)
	}
	return n, rest, nil
}

func needInputs(children []plan.Node, n int) error {
	if len(children) != n {
		return fmt.Errorf("want %d inputs, have %d", n, len(children))
	}
	return nil
}

func (pp *planParser) build(text string, children []plan.Node) (plan.Node, error) {
	kind, args, _ := strings.Cut(text, " ")
	lx := &lexer{toks: tokenize(args)}
	if n, ok, err := pp.buildOrdered(kind, lx, children); ok {
		return n, err
	}
	switch kind {
	case "scan":
		cols, ok := pp.tables[strings.TrimSpace(args)]
		if !ok {
			return nil, fmt.Errorf("unknown table %q", args)
		}
		return &plan.Scan{Relation: strings.TrimSpace(args), Cols: cols}, nil
	case "filter":
		if err := needInputs(children, 1); err != nil {
			return nil, err
		}
		ep := &exprParser{lx: lx, cols: children[0].Columns()}
		e, err := ep.full()
		if err != nil {
			return nil, err
		}
		return &plan.Filter{Input: children[0], Pred: e}, nil
	case "project":
		if err := needInputs(children, 1); err != nil {
			return nil, err
		}
		ep := &exprParser{lx: lx, cols: children[0].Columns()}
		p := &plan.Project{Input: children[0]}
		for {
			e, err := ep.expr()
			if err != nil {
				return nil, err
			}
			name := e.String()
			if lx.accept("as") {
				name = lx.next()
			}
			p.Exprs = append(p.Exprs, e)
			p.Cols = append(p.Cols, plan.Column{Name: name, Type: e.Type()})
			if !lx.accept(",") {
				break
			}
		}
		return p, lx.end()
	case "join":
		if err := needInputs(children, 2); err != nil {
			return nil, err
		}
		l, r := children[0], children[1]
		j := &plan.Join{Kind: plan.InnerJoin, Left: l, Right: r}
		j.Cols = append(append([]plan.Column(nil), l.Columns()...), r.Columns()...)
		if k, ok := map[string]plan.JoinKind{"left": plan.LeftJoin, "right": plan.RightJoin, "full": plan.FullJoin, "semi": plan.SemiJoin, "anti": plan.AntiJoin, "mark": plan.MarkJoin}[lx.peek()]; ok {
			lx.next()
			j.Kind = k
		}
		if lx.accept("on") {
			if err := lx.expect("("); err != nil {
				return nil, err
			}
			for {
				le, err := (&exprParser{lx: lx, cols: l.Columns()}).additive()
				if err != nil {
					return nil, err
				}
				nullSafe := false
				switch lx.next() {
				case "=":
				case "<=>":
					nullSafe = true
				default:
					return nil, fmt.Errorf("want = or <=> in join key")
				}
				re, err := (&exprParser{lx: lx, cols: r.Columns()}).additive()
				if err != nil {
					return nil, err
				}
				j.LeftKeys = append(j.LeftKeys, le)
				j.RightKeys = append(j.RightKeys, re)
				j.NullSafe = append(j.NullSafe, nullSafe)
				if !lx.accept(",") {
					break
				}
			}
			if err := lx.expect(")"); err != nil {
				return nil, err
			}
		}
		if lx.accept("where") {
			e, err := (&exprParser{lx: lx, cols: j.Cols}).expr()
			if err != nil {
				return nil, err
			}
			j.Residual = e
		}
		if lx.accept("test") {
			e, err := (&exprParser{lx: lx, cols: j.Cols}).expr()
			if err != nil {
				return nil, err
			}
			j.Test = e
		}
		j.SingleMatch = lx.accept("single")
		switch j.Kind {
		case plan.SemiJoin, plan.AntiJoin:
			j.Cols = l.Columns()
		case plan.MarkJoin:
			j.Cols = append(append([]plan.Column(nil), l.Columns()...), plan.Column{Name: "mark", Type: types.Of(types.Bool)})
		}
		return j, lx.end()
	case "aggregate":
		if err := needInputs(children, 1); err != nil {
			return nil, err
		}
		in := children[0]
		ep := &exprParser{lx: lx, cols: in.Columns()}
		a := &plan.Aggregate{Input: in}
		if lx.accept("group") {
			if err := lx.expect("="); err != nil {
				return nil, err
			}
			es, err := ep.list()
			if err != nil {
				return nil, err
			}
			a.GroupBy = es
			for _, e := range es {
				a.Cols = append(a.Cols, plan.Column{Name: e.String(), Type: e.Type()})
			}
		}
		if lx.accept("aggs") {
			if err := lx.expect("="); err != nil {
				return nil, err
			}
			if err := lx.expect("("); err != nil {
				return nil, err
			}
			for {
				c, err := ep.aggCall()
				if err != nil {
					return nil, err
				}
				a.Aggs = append(a.Aggs, c)
				a.Cols = append(a.Cols, plan.Column{Name: c.Func, Type: c.Type})
				if !lx.accept(",") {
					break
				}
			}
			if err := lx.expect(")"); err != nil {
				return nil, err
			}
		}
		return a, lx.end()
	case "distinct":
		if err := needInputs(children, 1); err != nil {
			return nil, err
		}
		return &plan.Distinct{Input: children[0]}, lx.end()
	case "union":
		if len(children) == 0 {
			return nil, fmt.Errorf("union needs inputs")
		}
		return &plan.Union{Ins: children, Cols: children[0].Columns()}, lx.end()
	case "values":
		return pp.values(lx)
	case "recursive", "working", "tumble", "hop":
		return pp.buildIterative(kind, lx, children)
	case "sort":
		if err := needInputs(children, 1); err != nil {
			return nil, err
		}
		ep := &exprParser{lx: lx, cols: children[0].Columns()}
		s := &plan.Sort{Input: children[0]}
		for {
			e, err := ep.expr()
			if err != nil {
				return nil, err
			}
			s.Keys = append(s.Keys, plan.SortKey{Expr: e, Desc: lx.accept("desc")})
			if !lx.accept(",") {
				break
			}
		}
		return s, lx.end()
	case "limit":
		if err := needInputs(children, 1); err != nil {
			return nil, err
		}
		n, err := strconv.ParseInt(lx.next(), 10, 64)
		if err != nil {
			return nil, err
		}
		return &plan.Limit{Input: children[0], Count: n}, lx.end()
	}
	return nil, fmt.Errorf("unknown node %q", kind)
}

// values parses "(v, ...), (v, ...)" of literals; a column's type is its
// first non-NULL literal's (text when all are NULL).
func (pp *planParser) values(lx *lexer) (plan.Node, error) {
	ep := &exprParser{lx: lx}
	var rows [][]plan.Expr
	for {
		es, err := ep.list()
		if err != nil {
			return nil, err
		}
		rows = append(rows, es)
		if !lx.accept(",") {
			break
		}
	}
	v := &plan.Values{Rows: rows}
	for i := range rows[0] {
		t := types.Of(types.Text)
		for _, r := range rows {
			if len(r) != len(rows[0]) {
				return nil, fmt.Errorf("VALUES rows differ in length")
			}
			if c := r[i].(*plan.Const); !c.Val.IsNull() {
				t = c.Typ
				break
			}
		}
		for _, r := range rows {
			if c := r[i].(*plan.Const); c.Val.IsNull() {
				c.Typ = t
			}
		}
		v.Cols = append(v.Cols, plan.Column{Name: fmt.Sprintf("column%d", i+1), Type: t})
	}
	return v, lx.end()
}

// lexer is a token stream.
type lexer struct {
	toks []string
	pos  int
}

func (l *lexer) peek() string {
	if l.pos < len(l.toks) {
		return l.toks[l.pos]
	}
	return ""
}

func (l *lexer) next() string {
	t := l.peek()
	if l.pos < len(l.toks) {
		l.pos++
	}
	return t
}

func (l *lexer) accept(tok string) bool {
	if strings.EqualFold(l.peek(), tok) {
		l.pos++
		return true
	}
	return false
}

func (l *lexer) expect(tok string) error {
	if !l.accept(tok) {
		return fmt.Errorf("want %q, have %q", tok, l.peek())
	}
	return nil
}

func (l *lexer) end() error {
	if l.pos < len(l.toks) {
		return fmt.Errorf("unexpected %q", l.peek())
	}
	return nil
}

func tokenize(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '\'':
			j := i + 1
			for j < len(s) {
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			toks = append(toks, s[i:min(j+1, len(s))])
			i = j + 1
		case c == '#' || c == '_' || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)) || c == '.':
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] == '.' || unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j]))) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		default:
			for _, op := range []string{"<=>", "::", "<=", ">=", "<>", "!="} {
				if strings.HasPrefix(s[i:], op) {
					toks = append(toks, op)
					i += len(op)
					goto next
				}
			}
			toks = append(toks, s[i:i+1])
			i++
		next:
		}
	}
	return toks
}

// exprParser parses expressions over cols.
type exprParser struct {
	lx   *lexer
	cols []plan.Column
}

func (p *exprParser) full() (plan.Expr, error) {
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	return e, p.lx.end()
}

// list parses "(e, ...)".
func (p *exprParser) list() ([]plan.Expr, error) {
	if err := p.lx.expect("("); err != nil {
		return nil, err
	}
	var es []plan.Expr
	if p.lx.accept(")") {
		return nil, nil
	}
	for {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		es = append(es, e)
		if !p.lx.accept(",") {
			break
		}
	}
	return es, p.lx.expect(")")
}

func (p *exprParser) expr() (plan.Expr, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.lx.accept("or") {
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = &plan.Or{Args: []plan.Expr{l, r}}
	}
	return l, nil
}

func (p *exprParser) and() (plan.Expr, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.lx.accept("and") {
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		l = &plan.And{Args: []plan.Expr{l, r}}
	}
	return l, nil
}

func (p *exprParser) not() (plan.Expr, error) {
	if p.lx.accept("not") {
		e, err := p.not()
		if err != nil {
			return nil, err
		}
		return &plan.Not{Arg: e}, nil
	}
	return p.comparison()
}

func (p *exprParser) comparison() (plan.Expr, error) {
	l, err := p.additive()
	if err != nil {
		return nil, err
	}
	if p.lx.accept("is") {
		neg := p.lx.accept("not")
		if err := p.lx.expect("null"); err != nil {
			return nil, err
		}
		return &plan.IsNull{Arg: l, Negated: neg}, nil
	}
	switch op := p.lx.peek(); op {
	case "=", "<>", "!=", "<", "<=", ">", ">=":
		p.lx.next()
		if op == "!=" {
			op = "<>"
		}
		r, err := p.additive()
		if err != nil {
			return nil, err
		}
		return binop(op, l, r)
	}
	return l, nil
}

func (p *exprParser) additive() (plan.Expr, error) {
	l, err := p.multiplicative()
	if err != nil {
		return nil, err
	}
	for {
		op := p.lx.peek()
		if op != "+" && op != "-" {
			return l, nil
		}
		p.lx.next()
		r, err := p.multiplicative()
		if err != nil {
			return nil, err
		}
		if l, err = binop(op, l, r); err != nil {
			return nil, err
		}
	}
}

func (p *exprParser) multiplicative() (plan.Expr, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		op := p.lx.peek()
		if op != "*" && op != "/" && op != "%" {
			return l, nil
		}
		p.lx.next()
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		if l, err = binop(op, l, r); err != nil {
			return nil, err
		}
	}
}

func (p *exprParser) unary() (plan.Expr, error) {
	if p.lx.accept("-") {
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		if c, ok := e.(*plan.Const); ok && (c.Typ.ID == types.Int4 || c.Typ.ID == types.Int8) {
			c.Val = types.MakeInt(c.Typ.ID, -c.Val.Int())
			return c, nil
		}
		op, err := types.ResolveUnary("-", e.Type())
		if err != nil {
			return nil, err
		}
		return &plan.UnaryOp{Op: op, Arg: castTo(e, op.Right)}, nil
	}
	return p.postfix()
}

func (p *exprParser) postfix() (plan.Expr, error) {
	e, err := p.primary()
	if err != nil {
		return nil, err
	}
	for p.lx.accept("::") {
		t, err := types.TypeByName([]string{p.lx.next()}, nil)
		if err != nil {
			return nil, err
		}
		if c, ok := e.(*plan.Const); ok {
			if c.Val.IsNull() {
				e = &plan.Const{Typ: t}
				continue
			}
			var v types.Value
			if c.Typ.ID == types.Text {
				v, err = types.Parse(t, c.Val.Str())
			} else {
				v, err = types.Cast(c.Val, t, true)
			}
			if err != nil {
				return nil, err
			}
			e = &plan.Const{Val: v, Typ: t}
			continue
		}
		e = &plan.Cast{Arg: e, Typ: t, Explicit: true}
	}
	return e, nil
}

func (p *exprParser) primary() (plan.Expr, error) {
	tok := p.lx.next()
	switch {
	case tok == "":
		return nil, fmt.Errorf("unexpected end of expression")
	case tok == "(":
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		return e, p.lx.expect(")")
	case tok[0] == '\'':
		s := strings.ReplaceAll(tok[1:len(tok)-1], "''", "'")
		return &plan.Const{Val: types.MakeText(s), Typ: types.Of(types.Text)}, nil
	case tok[0] >= '0' && tok[0] <= '9':
		if strings.Contains(tok, ".") {
			v, err := types.Parse(types.Of(types.Numeric), tok)
			return &plan.Const{Val: v, Typ: types.Of(types.Numeric)}, err
		}
		n, err := strconv.ParseInt(tok, 10, 64)
		if err != nil {
			return nil, err
		}
		if n == int64(int32(n)) {
			return &plan.Const{Val: types.MakeInt(types.Int4, n), Typ: types.Of(types.Int4)}, nil
		}
		return &plan.Const{Val: types.MakeInt(types.Int8, n), Typ: types.Of(types.Int8)}, nil
	case strings.EqualFold(tok, "null"):
		return &plan.Const{Typ: types.Of(types.Unknown)}, nil
	case strings.EqualFold(tok, "true"), strings.EqualFold(tok, "false"):
		return &plan.Const{Val: types.MakeBool(strings.EqualFold(tok, "true")), Typ: types.Of(types.Bool)}, nil
	case strings.EqualFold(tok, "coalesce"):
		args, err := p.restOfList()
		if err != nil {
			return nil, err
		}
		return &plan.Coalesce{Args: args, Typ: args[0].Type()}, nil
	case tok[0] == '#':
		i, err := strconv.Atoi(tok[1:])
		if err != nil || i >= len(p.cols) {
			return nil, fmt.Errorf("bad column %s", tok)
		}
		return &plan.ColRef{Index: i, Name: p.cols[i].Name, Typ: p.cols[i].Type}, nil
	}
	for i, c := range p.cols {
		if c.Name == tok {
			return &plan.ColRef{Index: i, Name: c.Name, Typ: c.Type}, nil
		}
	}
	return nil, fmt.Errorf("unknown column %q", tok)
}

// restOfList parses "(e, ...)" after a function name.
func (p *exprParser) restOfList() ([]plan.Expr, error) {
	return p.list()
}

// aggCall parses "fn(*)", "fn([distinct] e)" with an optional
// "filter (e)".
func (p *exprParser) aggCall() (plan.AggCall, error) {
	c := plan.AggCall{Func: strings.ToLower(p.lx.next())}
	if err := p.lx.expect("("); err != nil {
		return c, err
	}
	if !p.lx.accept("*") {
		c.Distinct = p.lx.accept("distinct")
		e, err := p.expr()
		if err != nil {
			return c, err
		}
		c.Arg = e
	}
	if err := p.lx.expect(")"); err != nil {
		return c, err
	}
	if p.lx.accept("filter") {
		if err := p.lx.expect("("); err != nil {
			return c, err
		}
		p.lx.accept("where")
		e, err := p.expr()
		if err != nil {
			return c, err
		}
		c.Filter = e
		if err := p.lx.expect(")"); err != nil {
			return c, err
		}
	}
	var err error
	if c.Arg == nil {
		c.Type = types.Of(types.Int8)
	} else {
		c.Type, err = types.AggregateType(c.Func, c.Arg.Type())
	}
	return c, err
}

// binop resolves op over l and r, casting the operands to the operator's
// argument types as the binder does.
func binop(op string, l, r plan.Expr) (plan.Expr, error) {
	o, err := types.ResolveBinary(op, l.Type(), r.Type())
	if err != nil {
		return nil, err
	}
	return &plan.BinOp{Op: o, Left: castTo(l, o.Left), Right: castTo(r, o.Right)}, nil
}

func castTo(e plan.Expr, t types.Type) plan.Expr {
	if e.Type().ID == t.ID || t.ID == types.Unknown {
		return e
	}
	if c, ok := e.(*plan.Const); ok {
		if c.Val.IsNull() {
			return &plan.Const{Typ: t}
		}
		if v, err := types.Cast(c.Val, t, false); err == nil {
			return &plan.Const{Val: v, Typ: t}
		}
	}
	return &plan.Cast{Arg: e, Typ: t}
}

// parseRow parses "v, v, ..." as values of cols' types: NULL, 'text' or a
// bare literal, each read by the type's input function.
func parseRow(s string, cols []plan.Column) (zset.Row, error) {
	toks := tokenize(s)
	var row zset.Row
	var cur []string
	flush := func() error {
		if len(row) >= len(cols) {
			return fmt.Errorf("too many values in %q", s)
		}
		t := cols[len(row)].Type
		lit := strings.Join(cur, "")
		cur = nil
		switch {
		case strings.EqualFold(lit, "null"):
			row = append(row, types.Null)
			return nil
		case strings.HasPrefix(lit, "'"):
			lit = strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
		}
		v, err := types.Parse(t, lit)
		if err != nil {
			return err
		}
		row = append(row, v)
		return nil
	}
	for _, tok := range toks {
		if tok == "," {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		cur = append(cur, tok)
	}
	if len(cur) > 0 {
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if len(row) != len(cols) {
		return nil, fmt.Errorf("want %d values, have %d in %q", len(cols), len(row), s)
	}
	return row, nil
}

// formatRow renders a row for the golden files: text-like values quoted,
// NULL bare.
func formatRow(r zset.Row, cols []plan.Column) string {
	parts := make([]string, len(r))
	for i, v := range r {
		parts[i] = formatValue(v, cols[i].Type)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func formatValue(v types.Value, t types.Type) string {
	if v.IsNull() {
		return "NULL"
	}
	s := types.Format(v, t)
	switch t.ID {
	case types.Text, types.Varchar, types.Bytea, types.Date, types.Timestamp, types.TimestampTZ, types.Interval:
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return s
}
