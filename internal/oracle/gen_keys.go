package oracle

import (
	"fmt"
	"slices"
	"strings"
)

// Tables with a primary key. About a third of the generated tables
// declare one, of one or two columns (k, k and another column, or another
// column alone), and their changes respect it: inserts of fresh keys,
// updates of other columns by predicate, updates of the key itself by key,
// deletes by key or by predicate, and INSERT ... ON CONFLICT (key) DO
// NOTHING or DO UPDATE. Now and then a statement violates the key on
// purpose; it is marked to fail with 23505 on both systems, and inside a
// transaction block it is the block's last statement before COMMIT (which
// PostgreSQL turns into ROLLBACK) or ROLLBACK.
//
// The generator cannot evaluate a predicate, so it does not know a keyed
// table's rows exactly. It keeps two sets of keys per table (keyModel):
// the keys that may be live and the keys that surely are. A fresh key is
// one that may not be live, so inserting it cannot fail; a violation uses
// a key that surely is, so it cannot succeed. Deletes by predicate and
// updates of keys that are only maybe live move keys from one set to the
// other. Key values are literals from the generator's domains, written in
// one spelling per value, so that equal keys are equal strings.

// keyable reports whether a primary key may have a column of type t.
func keyable(t sqlType) bool { return t != tBool && t != tJsonb }

// tupleKey is a key's values, one literal per key column.
type tupleKey []string

func (k tupleKey) String() string { return strings.Join(k, ", ") }

// keyModel is what the generator knows of a keyed table's live keys.
type keyModel struct {
	// maybe holds every key that may be live; sure those that surely are
	// (a subset of maybe). Both keep their order of addition.
	maybe, sure []tupleKey
}

func hasKey(set []tupleKey, k tupleKey) bool {
	return slices.ContainsFunc(set, func(x tupleKey) bool { return slices.Equal(x, k) })
}

func addKey(set []tupleKey, k tupleKey) []tupleKey {
	if hasKey(set, k) {
		return set
	}
	return append(set, k)
}

func removeKey(set []tupleKey, k tupleKey) []tupleKey {
	return slices.DeleteFunc(slices.Clone(set), func(x tupleKey) bool { return slices.Equal(x, k) })
}

// inserted records that k is now live.
func (m *keyModel) inserted(k tupleKey) {
	m.maybe, m.sure = addKey(m.maybe, k), addKey(m.sure, k)
}

// deleted records that k is no longer live.
func (m *keyModel) deleted(k tupleKey) {
	m.maybe, m.sure = removeKey(m.maybe, k), removeKey(m.sure, k)
}

// moved records an update of key from to key to (fresh): to is live if
// from was, and from is not live afterwards.
func (m *keyModel) moved(from, to tupleKey) {
	wasSure := hasKey(m.sure, from)
	m.deleted(from)
	m.maybe = addKey(m.maybe, to)
	if wasSure {
		m.sure = addKey(m.sure, to)
	}
}

func (m *keyModel) clone() *keyModel {
	return &keyModel{maybe: slices.Clone(m.maybe), sure: slices.Clone(m.sure)}
}

// keyed reports whether rel has a primary key.
func (rel relation) keyed() bool { return len(rel.key) > 0 }

// isKey reports whether column i is part of rel's primary key.
func (rel relation) isKey(i int) bool { return slices.Contains(rel.key, i) }

// chooseKey draws the primary key of a table with columns cols (the
// first is k), or nil for none.
func (g *gen) chooseKey(cols []column) []int {
	if !g.chance(33) {
		return nil
	}
	var others []int
	for i, c := range cols[1:] {
		if keyable(c.typ) {
			others = append(others, i+1)
		}
	}
	switch n := g.intn(0, 9, "key shape"); {
	case n < 5 || len(others) == 0:
		return []int{0}
	case n < 8:
		return []int{0, pick(g, others)}
	default:
		return []int{pick(g, others)}
	}
}

// tableDDL returns the column definitions of a CREATE TABLE, with rel's
// primary key.
func tableDDL(rel relation) string {
	defs := make([]string, len(rel.cols))
	for j, c := range rel.cols {
		defs[j] = c.name + " " + c.typ.ddl()
	}
	switch len(rel.key) {
	case 0:
	case 1:
		defs[rel.key[0]] += " PRIMARY KEY"
	default:
		names := make([]string, len(rel.key))
		for i, j := range rel.key {
			names[i] = rel.cols[j].name
		}
		defs = append(defs, "PRIMARY KEY ("+strings.Join(names, ", ")+")")
	}
	return strings.Join(defs, ", ")
}

// keyLiteral returns a non-NULL literal for a key column, in its one
// spelling (numeric -0.00 is 0.00).
func (g *gen) keyLiteral(t sqlType) string {
	lit := g.literal(t)
	if lit == "-0.00" {
		lit = "0.00"
	}
	return lit
}

// freshKey draws a key of rel that is not live and not in taken, or
// reports false after a few tries.
func (g *gen) freshKey(rel relation, taken []tupleKey) (tupleKey, bool) {
	m := g.keys[rel.name]
	for try := 0; try < 4; try++ {
		k := make(tupleKey, len(rel.key))
		for i, j := range rel.key {
			k[i] = g.keyLiteral(rel.cols[j].typ)
		}
		if !hasKey(m.maybe, k) && !hasKey(taken, k) {
			return k, true
		}
	}
	return nil, false
}

// keyedRow returns the values of a row of rel with key k, the other
// columns drawn.
func (g *gen) keyedRow(rel relation, k tupleKey) string {
	vals := make([]string, len(rel.cols))
	for j, c := range rel.cols {
		vals[j] = g.value(c.typ)
	}
	for i, j := range rel.key {
		vals[j] = k[i]
	}
	return "(" + strings.Join(vals, ", ") + ")"
}

// keyCond returns the WHERE condition that selects key k of rel.
func keyCond(rel relation, k tupleKey) string {
	conds := make([]string, len(rel.key))
	for i, j := range rel.key {
		conds[i] = rel.cols[j].name + " = " + k[i]
	}
	return strings.Join(conds, " AND ")
}

// violation emits a statement that must fail with 23505. Inside a
// transaction block the block is then aborted (see step).
func (g *gen) violation(format string, args ...any) {
	g.emit(format, args...)
	g.stmts[len(g.stmts)-1].Expect.Error = "23505"
	if g.saved != nil {
		g.aborted = true
	}
}

// insertKeyed emits an INSERT of fresh keys into rel, an upsert, or at
// times an INSERT that repeats a key.
func (g *gen) insertKeyed(rel relation) {
	m := g.keys[rel.name]
	switch {
	case g.chance(20):
		g.upsert(rel)
		return
	case g.chance(10):
		g.insertDuplicateKey(rel)
		return
	}
	var keys []tupleKey
	for n := g.intn(1, 4, "rows"); n > 0; n-- {
		if k, ok := g.freshKey(rel, keys); ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		g.upsert(rel)
		return
	}
	rows := make([]string, len(keys))
	for i, k := range keys {
		rows[i] = g.keyedRow(rel, k)
		m.inserted(k)
	}
	g.emit("INSERT INTO %s VALUES %s", rel.name, strings.Join(rows, ", "))
}

// insertDuplicateKey emits an INSERT that fails with 23505: of rows with
// fresh keys and one with a live key, or of two rows with one fresh key.
func (g *gen) insertDuplicateKey(rel relation) {
	m := g.keys[rel.name]
	var rows []string
	var keys []tupleKey
	for n := g.intn(0, 2, "rows before"); n > 0; n-- {
		if k, ok := g.freshKey(rel, keys); ok {
			keys = append(keys, k)
			rows = append(rows, g.keyedRow(rel, k))
		}
	}
	switch {
	case len(m.sure) > 0 && (len(keys) == 0 || g.chance(60)):
		rows = append(rows, g.keyedRow(rel, pick(g, m.sure)))
	case len(keys) > 0:
		rows = append(rows, g.keyedRow(rel, pick(g, keys)))
	default:
		g.upsert(rel)
		return
	}
	if len(rows) > 1 && g.chance(50) {
		last := len(rows) - 1
		rows[0], rows[last] = rows[last], rows[0]
	}
	g.violation("INSERT INTO %s VALUES %s", rel.name, strings.Join(rows, ", "))
}

// upsert emits INSERT ... ON CONFLICT (key) DO NOTHING or DO UPDATE of
// rows with live or new keys. DO UPDATE proposes each key once (PostgreSQL
// refuses to update a row twice in one statement); DO NOTHING may propose
// one twice.
func (g *gen) upsert(rel relation) {
	m := g.keys[rel.name]
	update := g.chance(60)
	var keys []tupleKey
	for n := g.intn(1, 3, "rows"); n > 0; n-- {
		var k tupleKey
		if len(m.maybe) > 0 && g.chance(50) {
			k = pick(g, m.maybe)
		} else {
			k = make(tupleKey, len(rel.key))
			for i, j := range rel.key {
				k[i] = g.keyLiteral(rel.cols[j].typ)
			}
		}
		if update && hasKey(keys, k) {
			continue
		}
		keys = append(keys, k)
	}
	rows := make([]string, len(keys))
	for i, k := range keys {
		rows[i] = g.keyedRow(rel, k)
		m.inserted(k)
	}
	names := make([]string, len(rel.key))
	for i, j := range rel.key {
		names[i] = rel.cols[j].name
	}
	action := "NOTHING"
	var sets []string
	if update {
		for j, c := range rel.cols {
			if rel.isKey(j) || (len(sets) > 0 && !g.chance(50)) {
				continue
			}
			val := "EXCLUDED." + c.name
			switch {
			case (c.typ == tInt || c.typ == tBigint) && g.chance(30):
				val = fmt.Sprintf("%s.%s + %d", rel.name, c.name, g.intn(-2, 2, "delta"))
			case g.chance(15):
				val = g.value(c.typ)
			}
			sets = append(sets, c.name+" = "+val)
		}
	}
	if len(sets) > 0 {
		action = "UPDATE SET " + strings.Join(sets, ", ")
		if g.chance(25) {
			action += " WHERE " + g.pred(g.scope(rel, rel.name), 0)
		}
	}
	g.emit("INSERT INTO %s VALUES %s ON CONFLICT (%s) DO %s", rel.name, strings.Join(rows, ", "), strings.Join(names, ", "), action)
}

// updateKeyed emits an UPDATE of rel: of a column outside the key by
// predicate, of the key of one row to a fresh key, or at times of one
// row's key to another live key.
func (g *gen) updateKeyed(rel relation) {
	m := g.keys[rel.name]
	var others []int
	for j := range rel.cols {
		if !rel.isKey(j) {
			others = append(others, j)
		}
	}
	switch n := g.intn(0, 99, "keyed update"); {
	case len(m.maybe) > 0 && (n >= 55 || len(others) == 0):
		if n >= 90 && len(m.sure) >= 2 {
			from := pick(g, m.sure)
			to := pick(g, m.sure)
			if !slices.Equal(from, to) {
				g.violation("UPDATE %s SET %s WHERE %s", rel.name, g.keySets(rel, from, to), keyCond(rel, from))
				return
			}
		}
		from := pick(g, m.maybe)
		to, ok := g.freshKey(rel, nil)
		if !ok {
			break
		}
		sets := g.keySets(rel, from, to)
		if len(others) > 0 && g.chance(30) {
			c := rel.cols[pick(g, others)]
			sets += ", " + c.name + " = " + g.value(c.typ)
		}
		m.moved(from, to)
		g.emit("UPDATE %s SET %s WHERE %s", rel.name, sets, keyCond(rel, from))
		return
	case len(others) == 0:
		g.insertKeyed(rel)
		return
	}
	if len(others) == 0 {
		g.insertKeyed(rel)
		return
	}
	c := rel.cols[pick(g, others)]
	where := g.pred(g.scope(rel, ""), 1)
	if len(m.maybe) > 0 && g.chance(30) {
		where = keyCond(rel, pick(g, m.maybe))
	}
	g.emit("UPDATE %s SET %s = %s WHERE %s", rel.name, c.name, g.newValue(c), where)
}

// keySets returns the SET list that changes key from to key to: every
// key column that differs (at least one does).
func (g *gen) keySets(rel relation, from, to tupleKey) string {
	var sets []string
	for i, j := range rel.key {
		if from[i] != to[i] || g.chance(20) {
			sets = append(sets, rel.cols[j].name+" = "+to[i])
		}
	}
	return strings.Join(sets, ", ")
}

// deleteKeyed emits a DELETE of rel by key (one key, or a list of them
// for a one-column key) or by predicate.
func (g *gen) deleteKeyed(rel relation) {
	m := g.keys[rel.name]
	if len(m.maybe) == 0 || g.chance(35) {
		// Any row may go: no key is sure any more.
		m.sure = nil
		g.emit("DELETE FROM %s WHERE %s", rel.name, g.pred(g.scope(rel, ""), 1))
		return
	}
	k := pick(g, m.maybe)
	if len(rel.key) == 1 && len(m.maybe) > 1 && g.chance(40) {
		k2 := pick(g, m.maybe)
		m.deleted(k)
		m.deleted(k2)
		g.emit("DELETE FROM %s WHERE %s IN (%s, %s)", rel.name, rel.cols[rel.key[0]].name, k[0], k2[0])
		return
	}
	m.deleted(k)
	g.emit("DELETE FROM %s WHERE %s", rel.name, keyCond(rel, k))
}

// saveKeys snapshots the key models at BEGIN; restoreKeys puts them back
// when the block rolls back (or aborted).
func (g *gen) saveKeys() {
	g.saved = map[string]*keyModel{}
	for name, m := range g.keys {
		g.saved[name] = m.clone()
	}
}

func (g *gen) restoreKeys() {
	g.keys, g.saved, g.aborted = g.saved, nil, false
}
