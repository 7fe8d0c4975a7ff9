package pgcdc

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/zset"
)

// snapshot creates the slot and loads every table as of the slot's
// consistent point, committing the rows and the progress in one epoch.
// Any slot left by an earlier attempt is dropped first: without progress
// nothing of it was committed.
func (r *Runner) snapshot(ctx context.Context, repl *pgconn.PgConn) (Progress, error) {
	conn, err := pgconn.Connect(ctx, r.cfg.ConnString)
	if err != nil {
		return Progress{}, err
	}
	defer conn.Close(context.Background())
	// A slot still held by another WAL sender for long is someone else's.
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = dropSlotWhenFree(dctx, conn, r.cfg.Slot)
	cancel()
	if err != nil {
		return Progress{}, err
	}
	slot, err := pglogrepl.CreateReplicationSlot(ctx, repl, r.cfg.Slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
	if err != nil {
		return Progress{}, fmt.Errorf("creating replication slot %q: %w", r.cfg.Slot, err)
	}
	start, err := pglogrepl.ParseLSN(slot.ConsistentPoint)
	if err != nil {
		return Progress{}, err
	}
	r.status(StateSnapshotting, fmt.Sprintf("reading %d tables at %s", len(r.cfg.Tables), start))
	ops, err := readSnapshot(ctx, conn, slot.SnapshotName, r.cfg.Tables)
	if err != nil {
		return Progress{}, err
	}
	p := Progress{Slot: r.cfg.Slot, LSN: start}
	if err := r.target.Apply(ctx, ops, p.Encode()); err != nil {
		return Progress{}, &applyError{err}
	}
	return p, nil
}

// readSnapshot reads every table in a REPEATABLE READ transaction that
// imports the exported snapshot. Each table is emptied, then gets the rows
// read.
func readSnapshot(ctx context.Context, conn *pgconn.PgConn, snapshotName string, tables []Table) ([]Op, error) {
	if _, err := conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '"+snapshotName+"'").ReadAll(); err != nil {
		return nil, fmt.Errorf("importing snapshot %s: %w", snapshotName, err)
	}
	var ops []Op
	for i := range tables {
		t := &tables[i]
		cols := ""
		for j, c := range t.Columns {
			if j > 0 {
				cols += ", "
			}
			cols += QuoteIdent(c.Name)
		}
		rr := conn.ExecParams(ctx, "SELECT "+cols+" FROM ONLY "+t.QualifiedName(), nil, nil, nil, nil)
		ops = append(ops, Op{Table: i, Kind: runtime.Truncate})
		for rr.NextRow() {
			vals := rr.Values()
			row := make(zset.Row, len(vals))
			for j, v := range vals {
				if v == nil {
					continue
				}
				val, err := ParseValue(t, j, string(v))
				if err != nil {
					rr.Close()
					return nil, err
				}
				row[j] = val
			}
			ops = append(ops, Op{Table: i, Kind: runtime.Insert, Row: row})
		}
		if _, err := rr.Close(); err != nil {
			return nil, fmt.Errorf("reading %s: %w", t.QualifiedName(), err)
		}
	}
	if _, err := conn.Exec(ctx, "COMMIT").ReadAll(); err != nil {
		return nil, err
	}
	return ops, nil
}
