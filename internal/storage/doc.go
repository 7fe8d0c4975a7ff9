// Package storage is RockStream's durable state store: one Pebble database
// per shard behind the state.Store interface, checksummed records for the
// catalog, incremental checkpoints to object storage, and the objects a
// cluster keeps there: bucket exports (buckets move between stores) and
// the epoch input log.
//
// Invariants:
//
//   - Reads see committed data only. Get, Scan and ScanReverse read what the
//     last successful Commit left; a single Scan reads one consistent point
//     in time. A Snapshot pins one point in time across many reads. Scan
//     and ScanReverse keep their Pebble iterators for later reads only
//     until the next Commit applies its batch (iterpool.go), so a read that
//     starts after a Commit returned sees it, whichever goroutine reads.
//   - Writes are pending until Commit. Set, Delete, DeleteRange and Merge go
//     into one pending batch that no read sees. Commit applies the whole
//     batch atomically (and, with Sync durability, fsyncs the write-ahead
//     log before returning); Abort drops it. After a crash the database
//     holds every batch whose Commit returned nil (with Sync durability)
//     and never part of a batch.
//   - A failed write stops the database until it reopens. When Commit
//     returns an error the pending batch is gone; after a write-ahead-log
//     failure in a commit, or a MANIFEST failure in a background flush or
//     compaction, every later write fails with an error wrapping
//     ErrFailed: Pebble cannot continue, and the failed batch may be
//     visible in memory though not durable. Reads (Get, Scan, ScanReverse,
//     Snapshot) are served meanwhile exactly at the last acknowledged
//     commit, from a snapshot taken at it, never seeing the failed batch;
//     when that cannot be done safely (the instance is wedged, a read of
//     it fails, a recovery attempt let go of it) they fail like writes
//     (stopped.go). The
//     broken Pebble instance is fenced at once (it writes no more files)
//     and Pebble's fatal path never ends the process. Recover (or any
//     call, at most once per interval) reopens the directory in the
//     process once it takes writes again, and resumes only if the files
//     hold exactly the acknowledged commits, and, when the failure was
//     the log's fsync in a Commit (whose error then wraps
//     ErrOutcomeUnknown, SQLSTATE 08007), possibly that batch too, whole;
//     otherwise the DB stays stopped with an error saying to restart,
//     which recovers the last durable state (Close, then Open).
//   - Fail closed. Open checks a directory read-only before Pebble may
//     change anything in it, and refuses, leaving it unchanged, a directory
//     whose files fail Pebble's checks (MANIFEST and WAL checksums, missing
//     or truncated tables), whose tables fail any block's checksum, that
//     holds database files without a current-manifest marker, that holds
//     fewer commits or an older epoch than its identity file records (a
//     lost, truncated or damaged write-ahead log), or that holds an
//     interrupted restore. A read of a block whose checksum fails returns
//     an error, never data. Such errors carry errs.DataCorrupted and name
//     the file. Records (EncodeRecord) and checkpoint files
//     (CreateCheckpoint checks what it uploads, RestoreCheckpoint what it
//     downloads) carry checksums that are verified before their contents
//     are used.
//   - The identity file never claims more than is durable. It is updated
//     only after the commit it describes is durable, so after any crash the
//     files hold at least what it claims; Open accepts more.
//   - A checkpoint holds one commit point. CreateCheckpoint of a DB that
//     keeps committing copies whole batches only (Pebble's checkpoint is
//     atomic with respect to them), so the copy's epoch is exactly the
//     last epoch in it. PruneCheckpoints deletes a checkpoint's manifest
//     before its files, and a shared table only when no kept manifest
//     lists it; Close waits for a checkpoint under way.
//   - A bucket import replaces exactly its buckets, atomically.
//     ExportBuckets reads one snapshot; each range it exports (a bucketed
//     key space, a catalog object, a run of buckets) travels as its range
//     deletion and its keys in one table. ImportBuckets checks every
//     table (digest, blocks, every key inside its buckets, deletions
//     covering each range once) before it writes anything, refuses an
//     export of another layout or catalog, and ingests all tables in one
//     Pebble ingest: after a crash the buckets hold the old contents or
//     the new ones, whole. What it commits before (append counters
//     raised, view row counts dropped) is correct either way.
//   - An input log entry is written once. InputLog.Append creates an
//     epoch's entry only if it is absent (a conditional create; a hard
//     link in file:// locations), so of two appenders exactly one wins
//     and every reader reads its entry; entries carry CRC32Cs that Read
//     verifies.
//   - Names fixed on disk never change: the merge operator is MergerName and
//     the Pebble format major version is FormatMajorVersion.
//
// The key layout the engine stores in a DB is specified in
// docs/format/storage.md, with the record envelope and the checkpoint
// bucket layout; bucket exports and the input log in
// docs/format/cluster-objects.md.
package storage
