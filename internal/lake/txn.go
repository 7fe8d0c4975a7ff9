package lake

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// txn is one transaction of a session: REPEATABLE READ over the store.
// Its snapshot is the revision committed when its first statement runs
// (as in PostgreSQL, not at BEGIN); its reads see that revision plus its
// own writes; its writes reach the store only through Commit.
type txn struct {
	store *Store
	// rev is the snapshot; valid once started.
	rev      uint64
	started  bool
	finished bool
	now      Value
	ws       *writeSet
	// temps are the session's temporary tables (ON COMMIT DROP), with
	// their rows; never stored.
	temps map[string]*tempTable
	// locks are the primary keys it inserted, held until it ends.
	locks lockState
	// intr is its session's cancel state (nil: not cancellable).
	intr *interrupt
}

type tempTable struct {
	def  *Table
	rows []storedRow
	next int64
}

func newTxn(s *Store) *txn {
	return &txn{store: s, ws: newWriteSet(), temps: map[string]*tempTable{}, locks: lockState{done: make(chan struct{})}}
}

// begin takes the snapshot if the transaction has none yet.
func (x *txn) begin() {
	if x.started {
		return
	}
	x.started = true
	x.rev = x.store.takeSnapshot()
	x.now = timestampOf(time.Now().UTC())
}

// finish ends the transaction's hold on the store: its snapshot (so
// that versions only it could see may be collected) and its key locks.
// It is idempotent.
func (x *txn) finish() {
	if x.started && !x.finished {
		x.store.dropSnapshot(x.rev)
	}
	x.finished = true
	x.store.locks.release(x)
}

// table resolves a name as a statement wrote it: an unqualified name is
// looked up among the temporary tables first, then in public, as the
// default search_path does. The definitions are the latest committed
// ones plus the transaction's own DDL, as PostgreSQL's catalog lookups
// are; the rows follow the snapshot.
func (x *txn) table(r relRef) (*Table, error) {
	if r.schema == "" || r.schema == "pg_temp" {
		if tt, ok := x.temps[r.name]; ok {
			return tt.def, nil
		}
		if r.schema == "pg_temp" {
			return nil, errorf(codeUndefinedTable, "relation %q does not exist", r.String())
		}
	}
	schema := normSchema(r.schema)
	for i := len(x.ws.created) - 1; i >= 0; i-- {
		t := x.ws.created[i]
		if t.Schema == schema && t.Name == r.name && !x.ws.dropped[t.OID] {
			return t, nil
		}
	}
	if t := x.store.lookup(schema, r.name); t != nil && !x.ws.dropped[t.OID] {
		return t, nil
	}
	return nil, errorf(codeUndefinedTable, "relation %q does not exist", r.String())
}

// rows returns the rows of t the transaction sees, in tid order.
func (x *txn) rows(t *Table) ([]storedRow, error) {
	if t.Temp {
		return append([]storedRow(nil), x.temps[t.Name].rows...), nil
	}
	var out []storedRow
	dels := x.ws.deletes[t.OID]
	if !x.createdHere(t) {
		n := 0
		err := x.store.scan(t, x.rev, func(r storedRow) error {
			if err := x.scanCheck(n); err != nil {
				return err
			}
			n++
			if _, gone := dels[r.tid]; !gone {
				out = append(out, r)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out = append(out, x.ws.inserts[t.OID]...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].tid < out[j].tid })
	return out, nil
}

// candidates returns the rows of t the transaction sees that may pass
// where (a superset: the caller evaluates where), in tid order, through
// the table_id index when where fixes it.
func (x *txn) candidates(t *Table, where expr) ([]storedRow, error) {
	probe, ok := probeFor(t, where)
	if !ok || x.createdHere(t) {
		return x.rows(t)
	}
	var out []storedRow
	dels := x.ws.deletes[t.OID]
	n := 0
	err := x.store.scanIndex(t, probe, x.rev, func(tid int64, begin uint64, rec []byte) (bool, error) {
		if err := x.scanCheck(n); err != nil {
			return false, err
		}
		n++
		if _, gone := dels[tid]; gone {
			return true, nil
		}
		vals, err := decodeRow(rec, t.Cols)
		if err != nil {
			return false, fmt.Errorf("table %s row %s: %w", t.Name, tidText(tid), err)
		}
		out = append(out, storedRow{tid: tid, begin: begin, vals: vals})
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	out = append(out, x.ws.inserts[t.OID]...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].tid < out[j].tid })
	return out, nil
}

func (x *txn) createdHere(t *Table) bool {
	for _, c := range x.ws.created {
		if c.OID == t.OID {
			return true
		}
	}
	return false
}

// insert adds a row version to t, checking NOT NULL and the primary key
// against the latest committed rows and the transaction's own.
func (x *txn) insert(t *Table, vals []Value) error {
	for i, c := range t.Cols {
		if c.NotNull && vals[i].Null {
			return &sqlError{code: codeNotNullViolation,
				msg:    `null value in column "` + c.Name + `" of relation "` + t.Name + `" violates not-null constraint`,
				detail: "Failing row contains (" + rowText(vals) + ")."}
		}
	}
	if t.Temp {
		tt := x.temps[t.Name]
		tt.next++
		tt.rows = append(tt.rows, storedRow{tid: tt.next, vals: vals})
		return nil
	}
	var key []byte
	if len(t.PK) > 0 {
		var err error
		if key, err = x.checkPK(t, vals); err != nil {
			return err
		}
	}
	tid := x.store.allocTid(t.OID)
	x.ws.tables[t.OID] = t
	x.ws.inserts[t.OID] = append(x.ws.inserts[t.OID], storedRow{tid: tid, vals: vals})
	if key != nil {
		x.ownKeys()[string(key)] = tid
	}
	return nil
}

// ownKeys maps the primary keys of the transaction's own inserted rows
// to their tids.
func (x *txn) ownKeys() map[string]int64 {
	if x.ws.ownPK == nil {
		x.ws.ownPK = map[string]int64{}
	}
	return x.ws.ownPK
}

// checkPK refuses a primary key held by the transaction's own rows or
// by a committed row it has not ended, and returns the key's encoding.
func (x *txn) checkPK(t *Table, vals []Value) ([]byte, error) {
	k, err := pkKey(t.OID, pkVals(t, vals))
	if err != nil {
		return nil, err
	}
	if _, dup := x.ownKeys()[string(k)]; dup {
		return nil, uniqueViolation(t, vals)
	}
	if x.createdHere(t) {
		return k, nil
	}
	// A committed holder fails the insert at once; an open transaction
	// that inserted the key is waited for, and then the committed state
	// judged again.
	if err := x.committedHolder(t, k, vals); err != nil {
		return nil, err
	}
	if _, err := x.store.locks.acquire(x, string(k)); err != nil {
		return nil, err
	}
	// Judged again under the lock: the key may have been committed
	// meanwhile, by a transaction waited for or not.
	if err := x.committedHolder(t, k, vals); err != nil {
		x.store.locks.releaseKey(x, string(k))
		return nil, err
	}
	return k, nil
}

// remove ends the row version r of t. A committed version another
// transaction ended after this one's snapshot cannot be ended again:
// 40001, as PostgreSQL reports it under REPEATABLE READ.
func (x *txn) remove(t *Table, r storedRow) error {
	if t.Temp {
		tt := x.temps[t.Name]
		for i, tr := range tt.rows {
			if tr.tid == r.tid {
				tt.rows = append(tt.rows[:i:i], tt.rows[i+1:]...)
				break
			}
		}
		return nil
	}
	ins := x.ws.inserts[t.OID]
	for i, own := range ins {
		if own.tid == r.tid {
			x.ws.inserts[t.OID] = append(ins[:i:i], ins[i+1:]...)
			if len(t.PK) > 0 {
				if k, err := pkKey(t.OID, pkVals(t, own.vals)); err == nil {
					delete(x.ownKeys(), string(k))
				}
			}
			return nil
		}
	}
	live, err := x.store.isLive(t.OID, r.tid, r.begin)
	if err != nil {
		return err
	}
	if !live {
		return errCommitConflict
	}
	x.ws.tables[t.OID] = t
	if x.ws.deletes[t.OID] == nil {
		x.ws.deletes[t.OID] = map[int64]uint64{}
	}
	x.ws.deletes[t.OID][r.tid] = r.begin
	return nil
}

// create adds a table in the transaction.
func (x *txn) create(t *Table) {
	if t.Temp {
		x.temps[t.Name] = &tempTable{def: t}
		return
	}
	t.OID = x.store.allocOID()
	x.ws.created = append(x.ws.created, t)
	x.ws.tables[t.OID] = t
}

// drop removes a table in the transaction.
func (x *txn) drop(t *Table) {
	if t.Temp {
		delete(x.temps, t.Name)
		return
	}
	if x.createdHere(t) {
		for i, c := range x.ws.created {
			if c.OID == t.OID {
				x.ws.created = append(x.ws.created[:i:i], x.ws.created[i+1:]...)
				break
			}
		}
		x.forgetInserts(t)
		return
	}
	x.ws.dropped[t.OID] = true
	x.forgetInserts(t)
	delete(x.ws.deletes, t.OID)
}

// rowText prints a row as PostgreSQL's error details do.
func rowText(vals []Value) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		if v.Null {
			parts[i] = "null"
		} else {
			parts[i] = v.Text()
		}
	}
	return strings.Join(parts, ", ")
}

// forgetInserts drops the transaction's own rows of t.
func (x *txn) forgetInserts(t *Table) {
	if len(t.PK) > 0 {
		for _, r := range x.ws.inserts[t.OID] {
			if k, err := pkKey(t.OID, pkVals(t, r.vals)); err == nil {
				delete(x.ownKeys(), string(k))
			}
		}
	}
	delete(x.ws.inserts, t.OID)
}

// touched says whether the transaction wrote rows of t (or created it),
// so that reads must merge its own writes.
func (x *txn) touched(t *Table) bool {
	return t.Temp || len(x.ws.inserts[t.OID]) > 0 || len(x.ws.deletes[t.OID]) > 0 || x.createdHere(t)
}

// committedHolder fails with 23505 when a committed row the transaction
// has not ended holds primary key k.
func (x *txn) committedHolder(t *Table, k []byte, vals []Value) error {
	tid, _, ok, err := x.store.pkHolder(k)
	if err != nil {
		return err
	}
	if ok {
		if _, deleted := x.ws.deletes[t.OID][tid]; !deleted {
			return uniqueViolation(t, vals)
		}
	}
	return nil
}
