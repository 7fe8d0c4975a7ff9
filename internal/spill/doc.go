// Package spill holds what an ad-hoc query writes to disk once its
// memory passes work_mem: the operator state of a query (hash
// aggregates, DISTINCT, join arrangements) in a Store, and the sorted
// runs of an external sort in a Runs file, both in one statement's
// temporary directory.
//
// Layout. An engine has one Area: <storage>/tmp for a durable store, a
// directory of its own under the system's temporary directory (or
// --temp-dir) for an in-memory one. A statement that spills gets a
// directory in it (Statement), created at its first spill; each Store
// and each sort gets a subdirectory or file there.
//
// Invariants:
//   - Nothing here is durable, and nothing reaches the store's data or a
//     checkpoint: a spilled Store is a Pebble instance of its own with
//     its write-ahead log off, in the statement's directory.
//   - A statement's directory is removed whole when the statement ends
//     (Statement.Close), whether it succeeded, failed, was canceled or
//     timed out; an Area removes what an earlier process left in it when
//     it is opened, and its own directory when it is closed.
//   - Spilled data is the state's own bytes (keys and values as the
//     operators encode them) or rows in the row encoding
//     (zset.EncodeRow), so that what is read back is exactly what was
//     written, and a Store's scans visit keys in the same order as an
//     in-memory store's.
//   - A Store holds at most its budget of writes in memory (as the memory
//     governor counts them, charged to the statement's account); past it
//     they are moved to disk in one batch and their charge returned.
//   - The bytes a statement writes count against its temp_file_limit;
//     past it the write fails with 53400.
package spill
