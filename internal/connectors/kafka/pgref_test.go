package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// pgReference is a database of a real PostgreSQL that applies the records
// a test gives a source, written as the SQL the source's documented
// semantics stand for: the reference its tables and views are compared
// with.
type pgReference struct {
	t    testing.TB
	conn *pgconn.PgConn
}

func newPGReference(t testing.TB, schema ...string) *pgReference {
	t.Helper()
	dsn := pgtest.NewDatabase(t, "kafkaref")
	conn, err := pgconn.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	p := &pgReference{t: t, conn: conn}
	for _, q := range schema {
		if err := p.exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return p
}

// exec runs SQL statements; PostgreSQL's refusal is the error.
func (p *pgReference) exec(sql string) error {
	_, err := p.conn.Exec(context.Background(), sql).ReadAll()
	return err
}

// query returns a query's rows as the harness prints RockStream's: lines
// of comma-separated text, NULL for null.
func (p *pgReference) query(q string) string {
	p.t.Helper()
	res, err := p.conn.Exec(context.Background(), q).ReadAll()
	if err != nil {
		p.t.Fatalf("PostgreSQL: %s: %v", q, err)
	}
	var lines []string
	for _, row := range res[len(res)-1].Rows {
		f := make([]string, len(row))
		for i, v := range row {
			if v == nil {
				f[i] = "NULL"
			} else {
				f[i] = string(v)
			}
		}
		lines = append(lines, strings.Join(f, ","))
	}
	return strings.Join(lines, "\n")
}

// refTable is a keyed table of the reference: its columns and primary-key
// column.
type refTable struct {
	name string
	cols []string
	key  string
}

// applyJSON applies a JSON source record to a keyed table: an INSERT of
// the fields the record has (the others take their DEFAULT) that replaces
// the row of the same key.
func (p *pgReference) applyJSON(tab refTable, value []byte) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(value, &obj); err != nil || obj == nil {
		return fmt.Errorf("not a JSON object: %s", value)
	}
	return p.exec(tab.upsert(obj))
}

// applyDebezium applies a Debezium change event to a keyed table.
func (p *pgReference) applyDebezium(tab refTable, value []byte) error {
	sql, err := tab.debeziumSQL(value)
	if err != nil {
		return err
	}
	return p.exec(sql)
}

// debeziumSQL is a Debezium change event as SQL on a keyed table: c and r
// upsert after, u deletes before's key and upserts after, d deletes
// before's key.
func (tab refTable) debeziumSQL(value []byte) (string, error) {
	type event struct {
		Before, After map[string]json.RawMessage
		Op            string
		Payload       *event
	}
	var ev event
	if err := json.Unmarshal(value, &ev); err != nil {
		return "", err
	}
	if ev.Payload != nil && ev.Op == "" {
		ev = *ev.Payload
	}
	var stmts []string
	if ev.Op == "u" || ev.Op == "d" {
		stmts = append(stmts, fmt.Sprintf("DELETE FROM %s WHERE %s = %s", tab.name, tab.key, sqlLiteral(ev.Before[tab.key])))
	}
	if ev.Op != "d" {
		stmts = append(stmts, tab.upsert(ev.After))
	}
	return strings.Join(stmts, "; "), nil
}

// upsert is INSERT ... ON CONFLICT DO UPDATE of the fields of obj that
// name columns.
func (tab refTable) upsert(obj map[string]json.RawMessage) string {
	var names, vals, sets []string
	for _, c := range tab.cols {
		if raw, ok := obj[c]; ok {
			names = append(names, c)
			vals = append(vals, sqlLiteral(raw))
		}
		sets = append(sets, c+" = EXCLUDED."+c)
	}
	ins := "INSERT INTO " + tab.name + " DEFAULT VALUES"
	if len(names) > 0 {
		ins = fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", tab.name, strings.Join(names, ", "), strings.Join(vals, ", "))
	}
	return ins + " ON CONFLICT (" + tab.key + ") DO UPDATE SET " + strings.Join(sets, ", ")
}

// sqlLiteral is a JSON value as an SQL literal of unknown type, read by
// the column's input function as the source reads it: a string's
// contents, a number or boolean as written, null as NULL, an object or
// array as its JSON text.
func sqlLiteral(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return "NULL"
	}
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(raw, &s); err != nil {
			return "NULL"
		}
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// sortedLines sorts the lines of a query's text.
func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// lineDiff describes how two sorted line sets differ: the lines only in
// got and only in want (as multisets), at most 10 of each.
func lineDiff(got, want string) string {
	count := map[string]int{}
	for _, l := range strings.Split(got, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(want, "\n") {
		count[l]--
	}
	var extra, missing []string
	for l, n := range count {
		for ; n > 0; n-- {
			extra = append(extra, l)
		}
		for ; n < 0; n++ {
			missing = append(missing, l)
		}
	}
	sort.Strings(extra)
	sort.Strings(missing)
	show := func(ls []string) string {
		if len(ls) > 10 {
			return strings.Join(ls[:10], " | ") + fmt.Sprintf(" | ... (%d in all)", len(ls))
		}
		return strings.Join(ls, " | ")
	}
	return fmt.Sprintf("only in RockStream: %s\nonly in PostgreSQL: %s", show(extra), show(missing))
}
