// Package lake is RockLake: a DuckLake catalog server. DuckDB's ducklake
// extension attaches it as its catalog database over the PostgreSQL wire
// protocol (ATTACH 'ducklake:postgres:host=... port=...'); RockLake
// answers the statements DuckDB sends as PostgreSQL 15 would, and stores
// the catalog in Pebble (internal/storage) with versions in the keys.
//
// The path of a statement:
//
//	conn.go      protocol state machine (pgproto3): startup, simple and
//	             extended query, COPY in and out, transaction status
//	classify.go  Classify: text → parse tree (pg_query) → Statement of one
//	             Kind with its plan; pure, reads no catalog
//	exec.go      handlers: scans, INSERT, UPDATE, DELETE, DDL over a txn
//	copy.go      COPY: binary and text streams in, rows rendered out as
//	             a scan produces them (exec.go's row sink)
//	pgcatalog.go the answers to postgres_scanner's introspection
//	txn.go       a REPEATABLE READ transaction: snapshot + own writes
//	store.go     the single writer and the MVCC key layout (keys.go)
//
// Invariants:
//
//   - Bounded surface. Every statement is classified into one of the
//     Kinds (docs/lake.md); a statement outside them is refused with
//     SQLSTATE 0A000 naming it, before anything runs, and the session
//     stays usable. Handlers accept only the shapes their Kind
//     describes; an expression outside the surface is refused the same
//     way. Nothing is half-handled.
//   - Snapshot reads. A transaction reads the revision committed when its
//     first statement ran, plus its own writes, and nothing else; a row
//     version is visible at revision r when its key's begin <= r < end.
//   - Atomic, durable commits by one writer. Store.Commit is serialized;
//     it checks the transaction against the latest revision (a row
//     version it ends must still be live: else 40001; a primary key it
//     inserts must be free: else 23505 on "<table>_pkey"; an INSERT of a
//     key another open transaction inserted waits for it, locks.go), then writes
//     all its changes as one storage batch, fsynced (storage.Sync), and
//     only then moves the revision. A failed check writes nothing.
//   - Old versions go when no snapshot can see them (gc.go): a version
//     ended at or before the oldest open snapshot's revision is removed
//     by the next commit, in its batch, and at start-up.
//   - Stable tids. Each row version gets a tid (ctid) when written, never
//     reused in its table; updates make a new version with a new tid, as
//     PostgreSQL's heap does, so DELETE ... WHERE ctid IN (...) ends
//     exactly the versions a scan returned.
//   - Fail closed. Every stored value is in a checksummed, versioned
//     envelope (storage.EncodeRecord); a record that fails its check is
//     an error (ErrCorrupted, XX001 to the client), never data.
//   - Nothing of a failed statement is sent. A COPY TO renders its rows
//     as the scan reads them (their text may point into the stored
//     record only until the next row), but sends them once the scan
//     has succeeded; an error mid-scan answers with the error alone.
//   - A failing session harms no other: handler panics are recovered and
//     answered with XX000.
//
// The key layout and payload formats are in docs/format/lake.md.
package lake
