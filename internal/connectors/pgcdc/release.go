package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/connectors/spec"
)

// publicationMark is the comment of a publication a source created.
func publicationMark(source string) string {
	return "created by RockStream for source " + source
}

func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// dropSource releases what a dropped postgres source holds upstream: its
// replication slot (which would otherwise keep the upstream's WAL
// forever) and the publication it created, if it created one. The
// connector manager calls it after the source's runner returned.
func dropSource(ctx context.Context, s *spec.Spec) error {
	conn, err := pgconn.Connect(ctx, connString(s))
	if err != nil {
		return fmt.Errorf("connecting to the upstream database to drop slot %q: %w", slot(s), err)
	}
	defer conn.Close(context.Background())
	if err := dropSlotWhenFree(ctx, conn, slot(s)); err != nil {
		return err
	}
	publication := s.OptionDefault("publication", "rockstream_"+strings.ToLower(s.Name))
	rows, err := query(ctx, conn, "SELECT obj_description(oid, 'pg_publication') FROM pg_publication WHERE pubname = $1", publication)
	if err != nil {
		return err
	}
	if len(rows) == 1 && rows[0][0] == publicationMark(s.Name) {
		if _, err := conn.Exec(ctx, "DROP PUBLICATION IF EXISTS "+QuoteIdent(publication)).ReadAll(); err != nil {
			return fmt.Errorf("dropping publication %q: %w", publication, err)
		}
	}
	return nil
}

// dropSlotWhenFree drops slot, waiting while a WAL sender still holds it
// (the one of a runner that just stopped exits a moment after its
// connection closed).
func dropSlotWhenFree(ctx context.Context, conn *pgconn.PgConn, slot string) error {
	for {
		err := dropSlotIfExists(ctx, conn, slot)
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" { // object_in_use
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// dropSlotIfExists drops slot; a missing slot is no error.
func dropSlotIfExists(ctx context.Context, conn *pgconn.PgConn, slot string) error {
	if _, err := query(ctx, conn, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", slot); err != nil {
		return fmt.Errorf("dropping the replication slot %q: %w", slot, err)
	}
	return nil
}

// DropSlot drops a slot as DROP SOURCE does, waiting while it is in use; a
// missing slot is no error.
func DropSlot(ctx context.Context, connString, slot string) error {
	conn, err := pgconn.Connect(ctx, connString)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return dropSlotWhenFree(ctx, conn, slot)
}
