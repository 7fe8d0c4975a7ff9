package runtime

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/storage"
	"github.com/rockstream/rockstream/internal/zset"
)

// Durable key namespaces, beside those of keys.go. See
// docs/format/storage.md.
const (
	nsCatalog   byte = 0x00 // 0x00 | id (8 bytes BE) → catalog record
	nsMeta      byte = 0x04 // 0x04 | name → value
	nsChangeLog byte = 0x05 // 0x05 | id uvarint | bucket u8 | epoch (8 bytes BE) | seq (8 bytes BE) → a record of entries (changerecord.go)
)

// Metadata keys.
var (
	metaFrontier = []byte{nsMeta, 'f', 'r', 'o', 'n', 't', 'i', 'e', 'r'}
	metaNextID   = []byte{nsMeta, 'n', 'e', 'x', 't', '_', 'i', 'd'}
	metaRevision = []byte{nsMeta, 'r', 'e', 'v', 'i', 's', 'i', 'o', 'n'}
)

// catalogRecordKind and catalogRecordVersion tag catalog records in their
// checksummed envelope.
const (
	catalogRecordKind    byte   = 'C'
	catalogRecordVersion uint16 = 1
)

// catalogRecord is the durable form of one object: its defining statement,
// replayed at start-up. Replaying statements in id order rebuilds exactly
// the catalog that was committed, because each definition may only name
// objects with smaller ids.
type catalogRecord struct {
	ID   uint64 `json:"id"`
	Kind string `json:"kind"`
	Name string `json:"name"`
	SQL  string `json:"sql"`
	// MaxRecursionIterations is a materialized view's iteration limit
	// for recursive queries (recursion.go), when not the default.
	MaxRecursionIterations int `json:"max_recursion_iterations,omitempty"`
	// CreatedEpoch is the epoch that created a materialized view (AS OF
	// EPOCH reads it from there); absent in records written before it
	// was kept.
	CreatedEpoch uint64 `json:"created_epoch,omitempty"`
	// RouteColumns is how many leading columns of a materialized view
	// route its stored rows to buckets (keys.go); absent: all of them.
	RouteColumns int `json:"route_columns,omitempty"`
	// Alters are the ALTER statements applied to a table since its
	// CREATE TABLE, in order (alter.go).
	Alters []string `json:"alters,omitempty"`
	// Constraint marks an index record as that of a UNIQUE constraint
	// (uniqueconstraint.go).
	Constraint bool `json:"constraint,omitempty"`
	// Inputs are a view's inputs as its definition saw them (inputs.go);
	// absent in records written before they were kept.
	Inputs map[string]*inputImage `json:"inputs,omitempty"`
	// TimeZone is the session time zone a materialized view is bound in
	// (zone.go); absent: UTC.
	TimeZone string `json:"time_zone,omitempty"`
	// Schema is the object's schema when not public (schemas.go): the
	// one it was created in, or moved to by ALTER ... SET SCHEMA;
	// absent: public.
	Schema string `json:"schema,omitempty"`
	// Path is the search path a function or view was created in, when
	// its definition calls a function outside public (recordPath);
	// absent: the object's schema alone.
	Path []string `json:"path,omitempty"`
}

func catalogKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{nsCatalog}, id)
}

// persistCatalog writes the records of objects created between old and
// next and deletes those of objects dropped.
func persistCatalog(st state.Store, old, next *catalog) error {
	for name, o := range next.byName {
		if old.byName[name] == o {
			continue
		}
		if err := writeCatalogRecord(st, o, next.recordSchema(o)); err != nil {
			return err
		}
	}
	live := make(map[uint64]bool, len(next.byName))
	for _, o := range next.byName {
		live[o.id] = true
	}
	for _, o := range old.byName {
		// A renamed object keeps its id and so its record.
		if !live[o.id] {
			if err := st.Delete(catalogKey(o.id)); err != nil {
				return err
			}
		}
	}
	if err := persistSchemas(st, old, next); err != nil {
		return err
	}
	if err := persistFunctions(st, old, next); err != nil {
		return err
	}
	return persistIndexes(st, old, next)
}

// writeCatalogRecord writes o's catalog record.
func writeCatalogRecord(st state.Store, o *object, schema string) error {
	rec := catalogRecord{ID: o.id, Kind: o.kindName(), Name: o.name, SQL: o.sqlText, MaxRecursionIterations: o.maxIterations, CreatedEpoch: o.created, RouteColumns: o.route,
		Alters: o.alters, Inputs: o.inputs, Schema: schema, Path: o.funcPath}
	if !o.zone.IsUTC() {
		rec.TimeZone = o.zone.Name()
	}
	payload, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return st.Set(catalogKey(o.id), storage.EncodeRecord(catalogRecordKind, catalogRecordVersion, payload))
}

// operationKey is where a DDL operation id's outcome is kept.
func operationKey(id string) []byte {
	return append([]byte{nsMeta, 'o', 'p', '/'}, id...)
}

// operationDone reports whether the DDL with operation id already
// committed, and its command tag.
func operationDone(r state.Reader, id string) (string, bool, error) {
	v, ok, err := r.Get(operationKey(id))
	return string(v), ok, err
}

// recordOperation remembers that the DDL with operation id committed, in
// the same epoch, so that a client retrying it after losing the answer
// gets the same answer instead of a duplicate object or an error.
func recordOperation(st state.Store, id, tag string) error {
	return st.Set(operationKey(id), []byte(tag))
}

// writeFrontier records the epoch being committed, the catalog's revision,
// its next object id and the store's layout version.
func writeFrontier(st state.Store, epoch uint64, cat *catalog) error {
	if err := st.Set(metaFrontier, binary.BigEndian.AppendUint64(nil, epoch)); err != nil {
		return err
	}
	if err := st.Set(metaRevision, binary.BigEndian.AppendUint64(nil, cat.revision)); err != nil {
		return err
	}
	if err := writeLayout(st); err != nil {
		return err
	}
	return st.Set(metaNextID, binary.BigEndian.AppendUint64(nil, cat.nextID))
}

func readUint64(r state.Reader, key []byte) (uint64, bool, error) {
	v, ok, err := r.Get(key)
	if err != nil || !ok {
		return 0, false, err
	}
	if len(v) != 8 {
		return 0, false, errs.Newf(errs.DataCorrupted, "metadata %q is %d bytes, want 8; the store is damaged: restore it from a checkpoint", key[1:], len(v))
	}
	return binary.BigEndian.Uint64(v), true, nil
}

// recoverCatalog rebuilds the catalog from the records in the store and
// returns it with the last committed epoch; sharded marks it a
// shard-mode engine's (shard.go).
func recoverCatalog(st Store, sharded bool) (*catalog, uint64, error) {
	epoch, _, err := readUint64(st, metaFrontier)
	if err != nil {
		return nil, 0, err
	}
	var recs []catalogRecord
	var rerr error
	err = st.Scan([]byte{nsCatalog}, []byte{nsCatalog + 1}, func(k, v []byte) bool {
		kind, version, payload, err := storage.DecodeRecord(v)
		if err != nil {
			rerr = fmt.Errorf("catalog record %x: %w", k, err)
			return false
		}
		if kind != catalogRecordKind || version != catalogRecordVersion {
			rerr = errs.Newf(errs.DataCorrupted, "catalog record %x has kind %q version %d, which this build does not read", k, kind, version)
			return false
		}
		var rec catalogRecord
		if err := json.Unmarshal(payload, &rec); err != nil {
			rerr = errs.Newf(errs.DataCorrupted, "catalog record %x does not decode: %v", k, err)
			return false
		}
		recs = append(recs, rec)
		return true
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return nil, 0, err
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].ID < recs[j].ID })
	// Schemas first: an object moved by ALTER ... SET SCHEMA may be in a
	// schema created after it.
	recs = append(schemaRecords(recs, true), inDependencyOrder(schemaRecords(recs, false))...)
	cat := newCatalog()
	cat.sharded = sharded
	// Replayed definitions write nothing that is kept: their state is
	// already in the store.
	scratch := state.NewOverlay(st)
	defer scratch.Discard()
	for _, rec := range recs {
		cat.nextID = rec.ID
		if rec.Kind == "schema" {
			cat = replaySchema(cat, rec)
			continue
		}
		next, err := replay(scratch, cat.withPath(cat.existingSchemas(recordPath(rec))), rec)
		if err != nil {
			return nil, 0, fmt.Errorf("recovering %s %s (id %d): %w", rec.Kind, rec.Name, rec.ID, err)
		}
		if rec.Kind != "function" && rec.Kind != "schema" && !recreated(next, rec) {
			return nil, 0, errs.Newf(errs.DataCorrupted, "recovering %s %s: its definition did not recreate it with id %d", rec.Kind, rec.Name, rec.ID)
		}
		cat = next
	}
	if err := recoverConnectors(st, cat); err != nil {
		return nil, 0, err
	}
	nextID, ok, err := readUint64(st, metaNextID)
	if err != nil {
		return nil, 0, err
	}
	if ok && nextID > cat.nextID {
		cat.nextID = nextID
	}
	if cat.revision, _, err = readUint64(st, metaRevision); err != nil {
		return nil, 0, err
	}
	return cat, epoch, nil
}

// schemaRecords returns the schema records of recs (schemas set), or
// the others, in recs' order.
func schemaRecords(recs []catalogRecord, schemas bool) []catalogRecord {
	var out []catalogRecord
	for _, r := range recs {
		if (r.Kind == "schema") == schemas {
			out = append(out, r)
		}
	}
	return out
}

// replay re-runs one object's defining statement against cat. A
// relation is created in its record's schema, whatever schema its
// statement names: ALTER ... SET SCHEMA may have moved it since.
func replay(st state.Store, cat *catalog, rec catalogRecord) (*catalog, error) {
	tree, err := parse(rec.SQL)
	if err != nil {
		return nil, errs.Newf(errs.DataCorrupted, "definition does not parse: %v", err)
	}
	if len(tree.Stmts) != 1 {
		return nil, errs.New(errs.DataCorrupted, "definition is not one statement")
	}
	n := tree.Stmts[0].Stmt
	if rv := createdRelation(n); rv != nil && rec.Kind != indexRecordKind {
		rv.Schemaname = publicSchema
		if rec.Schema != "" {
			rv.Schemaname = rec.Schema
		}
	}
	var next *catalog
	switch {
	case n.GetCreateStmt() != nil:
		next, _, err = createTable(st, cat, rec.SQL, n.GetCreateStmt())
		for _, a := range rec.Alters {
			if err != nil {
				break
			}
			next, err = replayAlter(next, rec.ID, a)
		}
	case n.GetViewStmt() != nil:
		next, _, err = createViewWith(st, cat, rec.SQL, n.GetViewStmt(), rec.Inputs)
		next = renamedTo(next, rec, err)
	case n.GetCreateFunctionStmt() != nil:
		next, err = replayFunction(cat, rec, n.GetCreateFunctionStmt())
	case n.GetCreateTableAsStmt() != nil:
		w := &epochWrite{cat: cat, logSeq: map[uint64]uint64{}, epoch: rec.CreatedEpoch}
		zone, zerr := recordZone(rec.TimeZone)
		if zerr != nil {
			return nil, zerr
		}
		cs := n.GetCreateTableAsStmt()
		takeReplace(cs)
		next, _, err = createMatViewWith(context.Background(), st, w, rec.SQL, cs, true, rec.MaxRecursionIterations, zone, rec.Inputs)
		next = renamedTo(next, rec, err)
		if err == nil {
			// The routing the view was created with, not the one its
			// plan would get now.
			o := next.lookup(rec.Name)
			o.derivedRoute, o.route = o.route, rec.RouteColumns
		}
	case n.GetIndexStmt() != nil:
		next, _, err = createIndex(context.Background(), st, cat, n.GetIndexStmt(), true)
		if err == nil && rec.Constraint {
			next.indexes[rec.Name].constraint = true
		}
	default:
		return nil, errs.Newf(errs.DataCorrupted, "definition is a %s", stmtName(n))
	}
	return next, err
}

// logChanges appends a view's delta to its change log at the epoch being
// built. Each entry goes to the bucket of its row; seq numbers the view's
// entries of the epoch across all buckets, in the order of the deltas.
//
// A bucket's entries of the delta are one record (changerecord.go), or
// several past maxLogRecord bytes, under the key of its first entry: the
// entries are ordered by bucket (a stable counting sort of the delta's
// positions), and each record is written through the path the previous
// one took, so that a write lands beside the last one instead of
// descending the tree from its root. The entries and their seqs are
// those of writing the delta's entries in its order.
func logChanges(st state.Store, w *epochWrite, o *object, delta zset.Batch) error {
	return logChangesOn(st, w, o, delta, nil, 1)
}

// logChangesOn is logChanges with the records written by n workers, each
// those of the buckets it owns (zset.BucketOwner), into an overlay of its
// own committed into st (writeOnWorkers): a record's key and value do not
// depend on who writes it, so the log is the same for any n.
//
// enc, when not nil, holds the delta's buckets and entries already
// encoded (encodeDelta), which the log then copies.
func logChangesOn(st state.Store, w *epochWrite, o *object, delta zset.Batch, enc *encodedDelta, n int) error {
	id := o.id
	prefix := relPrefix(nsChangeLog, id)
	base := w.logSeq[id]
	var buckets []byte
	var order []int32
	var first [zset.Buckets + 1]int32 // first[b]: where bucket b's entries start in order
	if enc != nil {
		buckets, order, first = enc.buckets, enc.order, enc.first
	} else {
		var scratch []byte
		buckets = make([]byte, len(delta))
		for i, e := range delta {
			var b int
			b, scratch = o.viewRowBucket(e.Row, scratch)
			buckets[i] = byte(b)
		}
		order, first = bucketOrder(nil, buckets)
	}
	write := func(st state.Store, order []int32) error {
		var k, v, e []byte
		var hint state.Hint
		for at := 0; at < len(order); {
			b, from := buckets[order[at]], uint64(order[at])
			k = append(append(k[:0], prefix...), b)
			k = binary.BigEndian.AppendUint64(k, w.epoch)
			k = binary.BigEndian.AppendUint64(k, base+from)
			v = v[:0]
			for ; at < len(order) && buckets[order[at]] == b && len(v) < maxLogRecord; at++ {
				i := order[at]
				if enc != nil {
					v = appendStoredLogEntry(v, uint64(i)-from, enc.storedValue(int(i)))
					continue
				}
				v, e = appendLogEntry(v, e, uint64(i)-from, delta[i].Weight, delta[i].Row)
			}
			if err := state.SetHinted(st, k, v, &hint); err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	if n <= 1 {
		err = write(st, order)
	} else {
		// A worker's buckets are one contiguous range, so its entries
		// are one run of order.
		err = writeOnWorkers(st, n, func(j int, ov state.Store) error {
			return write(ov, order[first[firstBucketOf(j, n)]:first[firstBucketOf(j+1, n)]])
		}, nil)
	}
	if err != nil {
		return err
	}
	w.logSeq[id] = base + uint64(len(delta))
	return nil
}

// trimEvery is how often (in epochs) change logs are trimmed to the
// retention horizon.
const trimEvery = 64

// trimChangeLogs deletes change-log entries older than the retention
// horizon, except those a sink still needs (sinkhold.go), and returns the
// horizon each view's log was trimmed to. idx, when not nil, is the
// change-log index of st's parent, the committed store: buckets it shows
// empty are not visited (the epoch being built logs nothing older than
// the horizon).
func trimChangeLogs(st state.Store, cat *catalog, epoch, retention uint64, idx *changeIndex) (map[uint64]uint64, error) {
	if epoch <= retention {
		return nil, nil
	}
	trimmed := map[uint64]uint64{}
	for _, v := range cat.matviewsInOrder() {
		horizon := epoch - retention
		held, ok, err := changeLogHold(st, cat, v.name)
		if err != nil {
			return nil, err
		}
		if ok && held < horizon {
			horizon = held
		}
		var ent *bucketEpochs
		if idx != nil {
			idx.mu.Lock()
			ent = idx.views[v.id]
			idx.mu.Unlock()
		}
		prefix := relPrefix(nsChangeLog, v.id)
		for b := 0; b < zset.Buckets; b++ {
			if ent != nil && ent[b] == 0 {
				continue
			}
			lo := append(slices.Clip(prefix), byte(b))
			hi := binary.BigEndian.AppendUint64(slices.Clip(lo), horizon)
			if err := deleteRange(st, lo, hi); err != nil {
				return nil, err
			}
		}
		trimmed[v.id] = horizon
	}
	return trimmed, nil
}

// oldestRetained returns the oldest epoch whose changes are still in the
// change logs.
func (e *Engine) oldestRetained(epoch uint64) uint64 {
	if epoch <= e.opts.ChangeLogRetention {
		return 0
	}
	return epoch - e.opts.ChangeLogRetention - epoch%trimEvery
}

// deleteRange removes every key in [lo, hi).
func deleteRange(st state.Store, lo, hi []byte) error {
	var keys [][]byte
	if err := st.Scan(lo, hi, func(k, _ []byte) bool {
		keys = append(keys, append([]byte(nil), k...))
		return true
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := st.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// Frontier returns the last committed epoch recorded in a store.
func Frontier(r state.Reader) (uint64, error) {
	epoch, _, err := readUint64(r, metaFrontier)
	return epoch, err
}

// createdRelation is the name a CREATE TABLE, VIEW or MATERIALIZED VIEW
// statement creates; nil for other statements.
func createdRelation(n *pg.Node) *pg.RangeVar {
	switch {
	case n.GetCreateStmt() != nil:
		return n.GetCreateStmt().Relation
	case n.GetViewStmt() != nil:
		return n.GetViewStmt().View
	case n.GetCreateTableAsStmt() != nil && n.GetCreateTableAsStmt().Into != nil:
		return n.GetCreateTableAsStmt().Into.Rel
	}
	return nil
}
