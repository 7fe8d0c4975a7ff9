// Package pgcdc reads a PostgreSQL database's changes through logical
// replication (the pgoutput plugin, protocol version 2) and turns them into
// whole upstream transactions of typed row changes.
//
// The package has a pure core and an I/O edge:
//
//   - schema.go maps upstream columns (type OID and typmod) to RockStream
//     types and compares a Relation message with the table the source was
//     created for: any difference is a SchemaChangeError, never a guess.
//   - decode.go is a Decoder: pgoutput messages in, Txn out, one Txn per
//     upstream COMMIT. Values arrive in text format and are parsed with the
//     target column's type (types.Parse), so a value RockStream cannot
//     represent exactly is an error, not a rounding.
//   - resolve.go turns a batch of transactions into per-table Z-set deltas.
//     An UPDATE or DELETE whose old tuple carries only the primary key, and
//     a new tuple with an unchanged TOASTed column ('u'), are completed
//     from the row RockStream holds for that key; a row RockStream does not
//     hold is an error naming the table and key.
//   - progress.go is the progress record committed with every epoch: the
//     slot, and the end LSN of the last upstream transaction applied.
//   - replicate.go and snapshot.go are the edge: the replication
//     connection (slot, publication, START_REPLICATION, standby status
//     updates) and the initial snapshot read at the slot's consistent point.
//
// Invariants:
//
//   - An upstream transaction is applied whole in one epoch, never split;
//     several whole transactions may share an epoch.
//   - The progress committed with an epoch is the end LSN of the last
//     transaction in it; after a restart, transactions whose end LSN is at
//     or below it are skipped.
//   - The slot is acknowledged (flush position of a standby status update)
//     only with an LSN whose epoch is durable, so PostgreSQL never discards
//     WAL that RockStream has not committed.
//   - The initial snapshot is read in a REPEATABLE READ transaction that
//     imports the snapshot exported when the slot was created, and it is
//     committed as one epoch together with the progress record naming the
//     slot's consistent point. A crash before that epoch leaves no snapshot
//     row and no progress: the next start drops the slot and begins again.
package pgcdc
