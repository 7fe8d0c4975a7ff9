package oracle

import (
	"fmt"
	"strings"
)

// The changes of generated workloads: inserts of small values that
// repeat (NULLs and duplicate rows included), updates that add small
// constants or set new values, deletes, and transactions of them that
// commit or roll back. Updates and deletes choose rows by a predicate.
// Tables with a primary key get changes that respect it (gen_keys.go).

// step emits one change, a transaction of changes, or an ad-hoc query.
func (g *gen) step() {
	switch n := g.intn(0, 99, "step kind"); {
	case n < 40:
		g.insert()
	case n < 60:
		g.update()
	case n < 75:
		g.delete()
	case n < 90:
		g.emit("BEGIN")
		g.saveKeys()
		for i := g.intn(1, 3, "transaction size"); i > 0 && !g.aborted; i-- {
			switch g.intn(0, 2, "change kind") {
			case 0:
				g.insert()
			case 1:
				g.update()
			default:
				g.delete()
			}
		}
		// A COMMIT of a block a key violation aborted rolls it back.
		if g.chance(70) && !g.aborted {
			g.emit("COMMIT")
			g.saved = nil
		} else {
			if g.aborted && g.chance(50) {
				g.emit("COMMIT")
			} else {
				g.emit("ROLLBACK")
			}
			g.restoreKeys()
		}
	default:
		sql, _ := g.query(0)
		g.emit("%s", sql)
	}
}

// value returns a random literal of type t, NULL at times.
func (g *gen) value(t sqlType) string {
	if g.chance(12) {
		return "NULL"
	}
	return g.literal(t)
}

// literal returns a random non-NULL literal of type t, from a small
// domain so that values repeat.
func (g *gen) literal(t sqlType) string {
	switch t {
	case tInt:
		return fmt.Sprint(g.intn(-3, 8, "int"))
	case tBigint:
		if g.chance(10) {
			return fmt.Sprint(3000000000 + g.intn(0, 2, "big"))
		}
		return fmt.Sprint(g.intn(-3, 8, "bigint"))
	case tNumeric:
		cents := g.intn(-400, 900, "numeric")
		sign := ""
		if cents < 0 {
			sign, cents = "-", -cents
		}
		if g.chance(50) {
			cents -= cents % 50 // fewer distinct values
		}
		return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
	case tText:
		return "'" + pick(g, []string{"a", "b", "c", "ab", "B", "", "é", "a b"}) + "'"
	case tBool:
		return pick(g, []string{"true", "false"})
	case tJsonb:
		// Integers only, so that values equal under jsonb's = print alike.
		return pick(g, []string{`'{"a": 1}'`, `'{"a": 2, "b": "x"}'`, `'{"b": [1, 2]}'`, `'[1, 2]'`, `'[2]'`,
			`'"a"'`, `'null'`, `'1'`, `'[]'`, `'{}'`, `'{"a": {"b": 1}}'`, `'["a", 1]'`})
	case tTimetz:
		// Explicit offsets only: a time without one would take the
		// session zone's. Some pairs are the same instant at different
		// offsets, which timetz keeps apart.
		return pick(g, []string{"'10:00:00+02'", "'09:00:00+01'", "'10:00:00+00'", "'23:30:00-05'",
			"'00:15:00+05:30'", "'10:00:00.5+02'", "'12:00:00-03'"})
	default:
		return fmt.Sprintf("'2024-01-%02d'", g.intn(1, 9, "day"))
	}
}

// typedLiteral returns a literal whose type PostgreSQL knows without
// context (for select lists and CASE results).
func (g *gen) typedLiteral(t sqlType) string {
	switch t {
	case tText:
		return g.literal(t) + "::text"
	case tDate:
		return g.literal(t) + "::date"
	case tJsonb:
		return g.literal(t) + "::jsonb"
	case tTimetz:
		return g.literal(t) + "::timetz"
	case tBigint:
		return g.literal(t) + "::bigint"
	case tNumeric:
		return g.literal(t) + "::numeric"
	}
	return g.literal(t)
}

func (g *gen) insert() {
	rel := pick(g, g.tables)
	if rel.keyed() {
		g.insertKeyed(rel)
		return
	}
	n := g.intn(1, 4, "rows")
	rows := make([]string, n)
	for i := range rows {
		prev := g.rows[rel.name]
		var vals []string
		if len(prev) > 0 && g.chance(25) {
			vals = pick(g, prev) // a duplicate
		} else {
			vals = make([]string, len(rel.cols))
			for j, c := range rel.cols {
				vals[j] = g.value(c.typ)
			}
			g.rows[rel.name] = append(prev, vals)
		}
		rows[i] = "(" + strings.Join(vals, ", ") + ")"
	}
	g.emit("INSERT INTO %s VALUES %s", rel.name, strings.Join(rows, ", "))
}

// changeable returns the tables an UPDATE or DELETE may change (not the
// append-only ones), or false when there are none.
func (g *gen) changeable() (relation, bool) {
	var rels []relation
	for _, r := range g.tables {
		if !r.appendOnly {
			rels = append(rels, r)
		}
	}
	if len(rels) == 0 {
		return relation{}, false
	}
	return pick(g, rels), true
}

func (g *gen) update() {
	rel, ok := g.changeable()
	if !ok {
		g.insert()
		return
	}
	if rel.keyed() {
		g.updateKeyed(rel)
		return
	}
	c := pick(g, rel.cols)
	sc := g.scope(rel, "")
	g.emit("UPDATE %s SET %s = %s WHERE %s", rel.name, c.name, g.newValue(c), g.pred(sc, 1))
}

// newValue returns what an UPDATE sets column c to: a small change of its
// value or a new one.
func (g *gen) newValue(c column) string {
	var val string
	switch {
	case c.typ == tBool && g.chance(50):
		val = "NOT " + c.name
	case (c.typ == tInt || c.typ == tBigint) && g.chance(50):
		val = fmt.Sprintf("%s + %d", c.name, g.intn(-2, 2, "delta"))
	case c.typ == tNumeric && g.chance(50):
		val = fmt.Sprintf("%s + %d.25", c.name, g.intn(-1, 1, "delta"))
	case c.typ == tDate && g.chance(50):
		val = fmt.Sprintf("%s + %d", c.name, g.intn(-2, 2, "delta"))
	case c.typ == tTimetz && g.chance(50):
		val = fmt.Sprintf("%s + interval '%d minutes'", c.name, 30*g.intn(-2, 2, "delta"))
	default:
		val = g.value(c.typ)
	}
	return val
}

func (g *gen) delete() {
	rel, ok := g.changeable()
	if !ok {
		g.insert()
		return
	}
	if rel.keyed() {
		g.deleteKeyed(rel)
		return
	}
	g.emit("DELETE FROM %s WHERE %s", rel.name, g.pred(g.scope(rel, ""), 1))
}
