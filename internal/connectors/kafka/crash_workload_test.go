package kafka

import (
	"fmt"
	"math/rand/v2"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The crash test's workload: a Debezium change stream of accounts keyed
// by id (creates, updates that may move an account to another group,
// deletes) and a JSON stream of group names, upserts keyed by group that
// sometimes leave fields out (the column defaults apply) or set a NOT NULL
// column to null (a rejected record).
//
// RockStream keeps the accounts in a table without a key, where a Debezium
// update deletes its exact before row and inserts its after row: a record
// applied twice leaves a row twice (or a row that should be gone), and a
// record lost leaves a stale row, so that any duplicate or loss changes
// the views. PostgreSQL keeps them keyed by id and applies each event as
// an upsert or a delete by key; the two agree only if every record was
// applied exactly once, in order per id.

// crashTables are the tables and views of both systems; RockStream's
// definitions differ only where the comments above say.
var (
	crashAccountsRS = "CREATE TABLE acct (id int, grp int, val int)"
	crashAccountsPG = "CREATE TABLE acct (id int PRIMARY KEY, grp int, val int)"
	crashGroups     = "CREATE TABLE grp_names (grp int PRIMARY KEY, name text NOT NULL DEFAULT 'unnamed', weight int DEFAULT 1)"
	crashViews      = []string{
		"totals AS SELECT grp, count(*) AS n, sum(val) AS total FROM acct GROUP BY grp",
		"named AS SELECT a.id, a.val * g.weight AS weighted, g.name FROM acct a JOIN grp_names g ON a.grp = g.grp WHERE a.val % 3 <> 0",
	}
	crashAccounts = refTable{name: "acct", cols: []string{"id", "grp", "val"}, key: "id"}
	crashGroupTab = refTable{name: "grp_names", cols: []string{"grp", "name", "weight"}, key: "grp"}
)

// crashChecks are the queries whose answers must be equal in RockStream
// and PostgreSQL at the end (rows compared as sorted lines).
var crashChecks = []string{
	"SELECT id, grp, val FROM acct",
	"SELECT grp, name, weight FROM grp_names",
	"SELECT grp, n, total FROM totals",
	"SELECT id, weighted, name FROM named",
}

// crashWorkload generates the records of both topics.
type crashWorkload struct {
	rng *rand.Rand
	// accounts maps an account's id to its current [grp, val].
	accounts map[int][2]int
}

const (
	crashIDs    = 400
	crashGroupN = 12
)

func newCrashWorkload(rng *rand.Rand) *crashWorkload {
	return &crashWorkload{rng: rng, accounts: map[int][2]int{}}
}

// account returns the next account change: a create of an absent id, else
// an update (two in three) or a delete. The record key is the id, so that
// every change of an account goes to the same partition, in order.
func (w *crashWorkload) account() *kgo.Record {
	id := w.rng.IntN(crashIDs)
	row := func(a [2]int) string { return fmt.Sprintf(`{"id": %d, "grp": %d, "val": %d}`, id, a[0], a[1]) }
	old, present := w.accounts[id]
	var value string
	switch {
	case !present:
		a := [2]int{w.rng.IntN(crashGroupN - 2), w.rng.IntN(1000)}
		w.accounts[id] = a
		value = fmt.Sprintf(`{"before": null, "after": %s, "op": "c"}`, row(a))
	case w.rng.IntN(3) < 2:
		a := [2]int{old[0], w.rng.IntN(1000)}
		if w.rng.IntN(5) == 0 {
			a[0] = w.rng.IntN(crashGroupN - 2)
		}
		w.accounts[id] = a
		value = fmt.Sprintf(`{"before": %s, "after": %s, "op": "u"}`, row(old), row(a))
	default:
		delete(w.accounts, id)
		value = fmt.Sprintf(`{"payload": {"before": %s, "after": null, "op": "d"}}`, row(old))
	}
	return &kgo.Record{Topic: "cdc", Key: fmt.Appendf(nil, "%d", id), Value: []byte(value)}
}

// group returns the next group upsert. Groups 10 and 11 never have
// accounts; some records leave name or weight out, a few set name to
// null and are rejected.
func (w *crashWorkload) group() *kgo.Record {
	grp := w.rng.IntN(crashGroupN)
	var value string
	switch w.rng.IntN(6) {
	case 0:
		value = fmt.Sprintf(`{"grp": %d}`, grp)
	case 1:
		value = fmt.Sprintf(`{"grp": %d, "name": "g%d-%d"}`, grp, grp, w.rng.IntN(100))
	case 2:
		value = fmt.Sprintf(`{"grp": %d, "weight": %d, "ignored": [1]}`, grp, w.rng.IntN(5))
	case 3:
		value = fmt.Sprintf(`{"grp": %d, "name": null, "weight": 2}`, grp)
	default:
		value = fmt.Sprintf(`{"grp": %d, "name": "g%d", "weight": %d}`, grp, grp, w.rng.IntN(5))
	}
	return &kgo.Record{Topic: "grp", Value: []byte(value)}
}
