package kafka

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestSourceJSONDefaults checks a JSON source against PostgreSQL applying
// the same records as INSERT ... ON CONFLICT DO UPDATE of the fields each
// record has: a field the record leaves out takes the column's DEFAULT
// (NULL without one), an explicit null is NULL, and a record that leaves
// out a NOT NULL column without default, or sets it to null, is refused
// with PostgreSQL's message and lands in the error table. The table and
// the error table must equal PostgreSQL's table and the records it
// refused.
func TestSourceJSONDefaults(t *testing.T) {
	const table = `CREATE TABLE items (
		id int PRIMARY KEY,
		name text NOT NULL DEFAULT 'unnamed',
		qty int DEFAULT 2 * 3,
		note text,
		price numeric(8,2) NOT NULL,
		added date DEFAULT '2024-01-01',
		tag text DEFAULT 'a' || 'b')`
	const view = "by_name AS SELECT name, count(*) AS n, sum(qty) AS qty, sum(price) AS price FROM items GROUP BY name"
	ref := newPGReference(t, table, "CREATE VIEW "+view)
	tab := refTable{name: "items", cols: []string{"id", "name", "qty", "note", "price", "added", "tag"}, key: "id"}
	h := newHarness(t, 1, "items")
	h.exec(table)
	h.exec("CREATE MATERIALIZED VIEW " + view)
	h.exec("CREATE SOURCE items_in FROM KAFKA (brokers = 'BROKERS', topic = 'items', format = 'json', error_table = 'items_errors') INTO items")

	records := []string{
		`{"id": 1, "price": 2}`,                                      // every default
		`{"id": 2, "name": null, "price": 3}`,                        // explicit null of a NOT NULL column
		`{"id": 3, "name": "x", "qty": null, "price": 1.5}`,          // explicit null: NULL, not the default
		`{"id": 4, "name": "y"}`,                                     // price is NOT NULL without default
		`{"id": 5, "price": "7.5", "added": null, "tag": "t"}`,       // null date, given tag
		`{"id": 1, "price": 9, "qty": 4}`,                            // replaces row 1: its name is the default again
		`{"id": 6, "price": 1, "note": "n", "other": true}`,          // a field naming no column is ignored
		`{"id": 5, "name": "z", "price": 8, "note": null, "qty": 0}`, // replaces row 5: added and tag default again
		`{"price": 3}`, // the key is NULL
	}
	var refused []string
	for i, r := range records {
		err := ref.applyJSON(tab, []byte(r))
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			refused = append(refused, fmt.Sprintf("%d,%s", i, pgErr.Message))
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if len(refused) != 3 {
		t.Fatalf("PostgreSQL refused %d records, want 3: %v", len(refused), refused)
	}
	h.produce("items", 0, records...)
	h.eventually("SELECT records, errors FROM rockstream_catalog.sources", fmt.Sprintf("%d,%d", len(records), len(refused)))

	for _, q := range []string{
		"SELECT * FROM items ORDER BY id",
		"SELECT * FROM by_name ORDER BY name",
	} {
		got, want := h.query(q), ref.query(q)
		if got != want {
			t.Errorf("%s:\n%s\nPostgreSQL:\n%s", q, got, want)
		}
	}
	if got, want := h.query(`SELECT "offset", error FROM items_errors ORDER BY "offset"`), strings.Join(refused, "\n"); got != want {
		t.Errorf("error table:\n%s\nPostgreSQL refused:\n%s", got, want)
	}
}
