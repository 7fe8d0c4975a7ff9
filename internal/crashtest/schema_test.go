package crashtest

import (
	"context"
	"errors"
	"fmt"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/errs"
)

// relation is one object of the schema. Tables and plain views have only
// a create statement; a materialized view also has its query, which the
// check runs ad hoc to compare with the view's stored contents.
type relation struct {
	name   string
	create string
	query  string
}

func table(name, create string) relation { return relation{name: name, create: create} }

func matview(name, query string) relation {
	return relation{name: name, create: "CREATE MATERIALIZED VIEW IF NOT EXISTS " + name + " AS " + query, query: query}
}

// schema is created in this order, one statement (and so one epoch) each,
// every time the child starts; after a kill the store must hold a prefix
// of it.
var schema = []relation{
	table("txn_log", "CREATE TABLE IF NOT EXISTS txn_log (id bigint PRIMARY KEY, w int NOT NULL)"),
	table("accounts", "CREATE TABLE IF NOT EXISTS accounts (k bigint PRIMARY KEY, w int NOT NULL, grp text, amount numeric(12,2), qty int, txn bigint NOT NULL)"),
	table("events", "CREATE TABLE IF NOT EXISTS events (w int NOT NULL, grp text, tag varchar(8), val int, txn bigint NOT NULL)"),
	table("labels", "CREATE TABLE IF NOT EXISTS labels (w int NOT NULL, grp text NOT NULL, label text, txn bigint NOT NULL, PRIMARY KEY (w, grp))"),
	matview("mv_acc_grp", "SELECT grp, count(*) AS n, sum(amount) AS total, avg(amount) AS mean, min(qty) AS lo, max(qty) AS hi, count(DISTINCT qty) AS dq FROM accounts GROUP BY grp"),
	matview("mv_ev_tag", "SELECT tag, count(*) AS n, count(val) AS nv, sum(val) AS s, min(val) AS lo, max(val) AS hi, count(DISTINCT grp) AS dg FROM events GROUP BY tag"),
	matview("mv_acc_ev", "SELECT a.w, a.k, a.grp, a.amount, e.tag, e.val FROM accounts a JOIN events e ON a.w = e.w AND a.grp = e.grp"),
	matview("mv_label_totals", "SELECT l.label, count(*) AS n, sum(a.amount) AS total, max(a.qty) AS hi FROM accounts a JOIN labels l ON a.w = l.w AND a.grp = l.grp GROUP BY l.label"),
	matview("mv_groups_by_hi", "SELECT hi, count(*) AS groups, sum(n) AS n FROM mv_acc_grp GROUP BY hi"),
	matview("mv_tags", "SELECT DISTINCT grp, tag FROM events"),
	table("v_big", "CREATE VIEW v_big AS SELECT w, grp, val FROM events WHERE val > 50"),
	matview("mv_big", "SELECT w, count(*) AS n, max(val) AS hi, count(DISTINCT grp) AS dg FROM v_big GROUP BY w"),
	matview("mv_log", "SELECT w, count(*) AS n, min(id) AS first, max(id) AS last FROM txn_log GROUP BY w"),
}

// extraView is created and dropped while the writers run, so that kills
// land on DDL (and on the backfill of a view) too.
var extraView = matview("mv_extra", "SELECT e.tag, count(*) AS n, sum(a.qty) AS q, min(a.amount) AS lo FROM events e JOIN accounts a ON e.w = a.w AND e.grp = a.grp GROUP BY e.tag")

const dropExtraView = "DROP MATERIALIZED VIEW IF EXISTS mv_extra"

// createSchema creates every relation of the schema that is missing.
// When progress is not nil it is called with each statement's index before
// the statement runs.
func createSchema(ctx context.Context, db *rockstream.DB, progress func(i int)) error {
	for i, r := range schema {
		if progress != nil {
			progress(i)
		}
		_, err := db.Exec(ctx, r.create)
		if err != nil && errs.SQLState(err) != "42P07" {
			return fmt.Errorf("%s: %w", r.create, err)
		}
	}
	return nil
}

// exists reports whether a relation of this name can be read.
func exists(ctx context.Context, db *rockstream.DB, name string) (bool, error) {
	_, err := db.Query(ctx, "SELECT count(*) FROM "+name)
	switch {
	case err == nil:
		return true, nil
	case errs.SQLState(err) == "42P01":
		return false, nil
	}
	return false, fmt.Errorf("reading %s: %w", name, err)
}

// presentSchema returns how many relations of the schema exist, and an
// error when those that exist are not a prefix of it: each DDL statement
// commits as an epoch of its own, in order.
func presentSchema(ctx context.Context, db *rockstream.DB) (int, error) {
	n := 0
	var gaps []string
	for i, r := range schema {
		ok, err := exists(ctx, db, r.name)
		if err != nil {
			return 0, err
		}
		switch {
		case ok && n == i:
			n++
		case ok:
			gaps = append(gaps, fmt.Sprintf("%s exists although %s, created before it, does not", r.name, schema[n].name))
		}
	}
	if gaps != nil {
		return n, errors.New(fmt.Sprint(gaps))
	}
	return n, nil
}
