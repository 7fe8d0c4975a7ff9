package pgcdc

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// Target is where the source's changes land.
type Target interface {
	RowReader
	// Progress returns the progress bytes committed last, nil when none.
	Progress(ctx context.Context) ([]byte, error)
	// Apply commits the changes and the progress bytes as one durable
	// epoch, or nothing of them.
	Apply(ctx context.Context, ops []Op, progress []byte) error
}

// Config is what a runner needs to replicate.
type Config struct {
	// ConnString is a libpq connection string or URL of the upstream
	// database; the runner adds replication=database for the slot.
	ConnString  string
	Slot        string
	Publication string
	Tables      []Table
	// MaxBatchRows and MaxBatchDelay bound how many changes and how much
	// time whole transactions collect before they are committed together.
	MaxBatchRows  int
	MaxBatchDelay time.Duration
	// StatusInterval is how often the runner reports its position to
	// PostgreSQL when nothing else happens.
	StatusInterval time.Duration
}

// States a runner reports.
const (
	StateSnapshotting = "snapshotting"
	StateStreaming    = "streaming"
)

// Runner replicates one source: RunOnce connects, loads the snapshot when
// there is no progress, and streams until an error. Whoever runs it
// restarts it after errors that are not a FatalError (the connector
// manager, with backoff).
type Runner struct {
	cfg    Config
	target Target
	status func(state, detail string)
	// Lag, when set, hears how far the committed position is behind the
	// upstream's WAL, in bytes (about once a second while streaming).
	Lag func(bytes int64)
}

// NewRunner returns a runner; status (may be nil) hears every state change.
func NewRunner(cfg Config, target Target, status func(state, detail string)) *Runner {
	if cfg.MaxBatchRows <= 0 {
		cfg.MaxBatchRows = 100000
	}
	if cfg.MaxBatchDelay <= 0 {
		cfg.MaxBatchDelay = 50 * time.Millisecond
	}
	if cfg.StatusInterval <= 0 {
		cfg.StatusInterval = 10 * time.Second
	}
	if status == nil {
		status = func(string, string) {}
	}
	return &Runner{cfg: cfg, target: target, status: status}
}

// FatalError is a failure that reconnecting cannot repair: a schema
// change, a row RockStream cannot place, a lost slot.
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// applyError is a failure of the target to commit.
type applyError struct{ err error }

func (e *applyError) Error() string { return "committing the source's changes: " + e.err.Error() }
func (e *applyError) Unwrap() error { return e.err }

// replicationConnString adds replication=database to s, leaving the rest
// of it as written.
func replicationConnString(s string) string {
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		if strings.Contains(s, "?") {
			return s + "&replication=database"
		}
		return s + "?replication=database"
	}
	return s + " replication=database"
}

// RunOnce connects, loads the snapshot when there is no progress, and
// streams until ctx ends or an error. connected reports whether streaming
// started.
func (r *Runner) RunOnce(ctx context.Context) (connected bool, err error) {
	raw, err := r.target.Progress(ctx)
	if err != nil {
		return false, &applyError{err}
	}
	progress, ok, err := DecodeProgress(raw)
	if err != nil {
		return false, &FatalError{err}
	}
	repl, err := pgconn.Connect(ctx, replicationConnString(r.cfg.ConnString))
	if err != nil {
		return false, err
	}
	defer repl.Close(context.Background())
	if !ok {
		if progress, err = r.snapshot(ctx, repl); err != nil {
			return false, err
		}
	} else if err := r.checkSlot(ctx, progress); err != nil {
		return false, err
	}
	err = pglogrepl.StartReplication(ctx, repl, r.cfg.Slot, progress.LSN, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '2'", "publication_names '" + strings.ReplaceAll(r.cfg.Publication, "'", "''") + "'"},
	})
	if err != nil {
		return false, fmt.Errorf("starting replication from slot %q: %w", r.cfg.Slot, err)
	}
	r.status(StateStreaming, fmt.Sprintf("from %s", progress.LSN))
	s := &stream{r: r, conn: repl, dec: NewDecoder(r.cfg.Tables), committed: progress.LSN, committedAt: time.Now()}
	s.durable.Store(uint64(progress.LSN))
	if r.Lag != nil {
		lctx, stop := context.WithCancel(ctx)
		defer stop()
		go s.watchLag(lctx)
	}
	return true, s.run(ctx)
}

// checkSlot fails for good when the slot the progress names is gone:
// the changes since the progress would be lost.
func (r *Runner) checkSlot(ctx context.Context, p Progress) error {
	conn, err := pgconn.Connect(ctx, r.cfg.ConnString)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	rows, err := query(ctx, conn, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", p.Slot)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return &FatalError{fmt.Errorf("replication slot %q no longer exists upstream; the changes after %s cannot be read again (drop and recreate the source to load a new snapshot)", p.Slot, p.LSN)}
	}
	return nil
}

// stream is one replication connection's receive loop.
type stream struct {
	r    *Runner
	conn *pgconn.PgConn
	dec  *Decoder
	// committed is the position whose epoch is durable: the end LSN of
	// the last transaction applied, or a later position the stream was
	// idle at. It is the only position ever acknowledged. durable is its
	// copy for the lag watcher.
	committed   pglogrepl.LSN
	committedAt time.Time
	durable     atomic.Uint64
	// idleAt is the latest position a keepalive reported while no
	// transaction was open: every transaction ending at or before it has
	// been received.
	idleAt  pglogrepl.LSN
	pending []*Txn
	rows    int
	since   time.Time // when the first pending transaction arrived
}

// idleCommitDelay is how long the stream waits before committing a
// position it was idle at. Committing it lets the slot advance while the
// upstream writes only what the source does not replicate (other tables,
// other databases); otherwise the slot would hold that WAL forever.
const idleCommitDelay = time.Second

func (s *stream) run(ctx context.Context) error {
	nextStatus := time.Now().Add(s.r.cfg.StatusInterval)
	for {
		if len(s.pending) > 0 && (s.rows >= s.r.cfg.MaxBatchRows || time.Since(s.since) >= s.r.cfg.MaxBatchDelay) {
			if err := s.flush(ctx); err != nil {
				return err
			}
		}
		idle := len(s.pending) == 0 && s.idleAt > s.committed
		if idle && time.Since(s.committedAt) >= idleCommitDelay {
			if err := s.commit(ctx, nil, s.idleAt); err != nil {
				return err
			}
			idle = false
		}
		if time.Now().After(nextStatus) {
			if err := s.ack(ctx); err != nil {
				return err
			}
			nextStatus = time.Now().Add(s.r.cfg.StatusInterval)
		}
		deadline := nextStatus
		if len(s.pending) > 0 {
			deadline = s.since.Add(s.r.cfg.MaxBatchDelay)
		} else if idle {
			deadline = s.committedAt.Add(idleCommitDelay)
		}
		rctx, cancel := context.WithDeadline(ctx, deadline)
		msg, err := s.conn.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			if pgconn.Timeout(err) && ctx.Err() == nil {
				if len(s.pending) > 0 {
					if err := s.flush(ctx); err != nil {
						return err
					}
				}
				continue
			}
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if err := s.copyData(ctx, m.Data); err != nil {
				return err
			}
		case *pgproto3.ErrorResponse:
			return pgconn.ErrorResponseToPgError(m)
		default:
			return fmt.Errorf("replication stream: unexpected %T", msg)
		}
	}
}

func (s *stream) copyData(ctx context.Context, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return err
		}
		if !s.dec.InTxn() && ka.ServerWALEnd > s.idleAt {
			s.idleAt = ka.ServerWALEnd
		}
		if ka.ReplyRequested {
			return s.ack(ctx)
		}
	case pglogrepl.XLogDataByteID:
		x, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return err
		}
		txn, err := s.dec.Decode(x.WALData)
		if err != nil {
			return &FatalError{err}
		}
		if txn == nil || txn.EndLSN <= s.committed || (len(s.pending) > 0 && txn.EndLSN <= s.pending[len(s.pending)-1].EndLSN) {
			return nil
		}
		if len(s.pending) == 0 {
			s.since = time.Now()
		}
		s.pending = append(s.pending, txn)
		s.rows += len(txn.Changes)
	}
	return nil
}

// flush commits the pending transactions as one epoch and then, only
// then, acknowledges their end LSN.
func (s *stream) flush(ctx context.Context) error {
	res := NewResolver(s.r.cfg.Tables, s.r.target)
	for _, txn := range s.pending {
		if err := res.Add(txn); err != nil {
			return &FatalError{err}
		}
	}
	// Every transaction received before the last idle keepalive is
	// pending or committed, so its position is covered too.
	if err := s.commit(ctx, res.Ops(), max(s.pending[len(s.pending)-1].EndLSN, s.idleAt)); err != nil {
		return err
	}
	s.pending, s.rows = s.pending[:0], 0
	return nil
}

// commit applies ops with the position at in one durable epoch, then
// acknowledges it.
func (s *stream) commit(ctx context.Context, ops []Op, at pglogrepl.LSN) error {
	p := Progress{Slot: s.r.cfg.Slot, LSN: at}
	stop := s.keepAlive(ctx)
	err := s.r.target.Apply(ctx, ops, p.Encode())
	stop()
	if err != nil {
		return &applyError{err}
	}
	s.committed, s.committedAt = at, time.Now()
	s.durable.Store(uint64(at))
	return s.ack(ctx)
}

// watchLag reports, about once a second, how many bytes of WAL the
// upstream has written past the committed position, from a connection of
// its own; -1 while the upstream cannot be asked.
func (s *stream) watchLag(ctx context.Context) {
	var conn *pgconn.PgConn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		lag := int64(-1)
		if conn == nil {
			conn, _ = pgconn.Connect(ctx, s.r.cfg.ConnString)
		}
		if conn != nil {
			rows, err := query(ctx, conn, "SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END)::text")
			if err == nil && len(rows) == 1 {
				if end, err := pglogrepl.ParseLSN(rows[0][0]); err == nil {
					lag = max(int64(end)-int64(s.durable.Load()), 0)
				}
			} else if err != nil {
				conn.Close(context.Background())
				conn = nil
			}
		}
		if ctx.Err() != nil {
			return
		}
		s.r.Lag(lag)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// keepAlive repeats the last acknowledged position while a large batch
// commits, so that PostgreSQL does not end the connection for silence
// (wal_sender_timeout). The returned function stops it and waits: only
// then may the loop use the connection again.
func (s *stream) keepAlive(ctx context.Context) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	committed := s.committed
	go func() {
		defer close(exited)
		t := time.NewTicker(min(s.r.cfg.StatusInterval, 5*time.Second))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{
					WALWritePosition: committed, WALFlushPosition: committed, WALApplyPosition: committed,
				})
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// ack reports the durable position to PostgreSQL, which may then discard
// the WAL before it.
func (s *stream) ack(ctx context.Context) error {
	return pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: s.committed, WALFlushPosition: s.committed, WALApplyPosition: s.committed,
	})
}
