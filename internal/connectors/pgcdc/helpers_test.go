package pgcdc

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// upstream is a fresh PostgreSQL database for one test.
type upstream struct {
	t    testing.TB
	dsn  string
	conn *pgconn.PgConn
}

func newUpstream(t testing.TB, slot string) *upstream {
	t.Helper()
	dsn := pgtest.NewDatabase(t, "cdc")
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{t: t, dsn: dsn, conn: conn}
	// Cleanups run last-registered first: the slot goes before the
	// database, which PostgreSQL will not drop while a slot uses it.
	t.Cleanup(func() {
		defer conn.Close(context.Background())
		if err := DropSlot(context.Background(), dsn, slot); err != nil {
			t.Errorf("dropping slot: %v", err)
		}
	})
	return u
}

func (u *upstream) exec(sql string) {
	u.t.Helper()
	if _, err := u.conn.Exec(context.Background(), sql).ReadAll(); err != nil {
		u.t.Fatalf("upstream %q: %v", sql, err)
	}
}

func (u *upstream) query(sql string, args ...string) [][]string {
	u.t.Helper()
	rows, err := query(context.Background(), u.conn, sql, args...)
	if err != nil {
		u.t.Fatalf("upstream %q: %v", sql, err)
	}
	return rows
}

// text returns the upstream table's rows in memTarget.text's form.
func (u *upstream) text(t *Table) string {
	u.t.Helper()
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = QuoteIdent(c.Name)
	}
	res := u.conn.ExecParams(context.Background(), "SELECT "+strings.Join(cols, ", ")+" FROM "+t.QualifiedName(), nil, nil, nil, nil).Read()
	if res.Err != nil {
		u.t.Fatal(res.Err)
	}
	var lines []string
	for _, r := range res.Rows {
		parts := make([]string, len(r))
		for j, v := range r {
			if v == nil {
				parts[j] = `\N`
			} else {
				parts[j] = string(v)
			}
		}
		lines = append(lines, strings.Join(parts, "|"))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// slotFlushed returns the slot's confirmed_flush_lsn.
func (u *upstream) slotFlushed(slot string) pglogrepl.LSN {
	u.t.Helper()
	rows := u.query("SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", slot)
	if len(rows) == 0 {
		u.t.Fatalf("slot %s does not exist", slot)
	}
	lsn, err := pglogrepl.ParseLSN(rows[0][0])
	if err != nil {
		u.t.Fatal(err)
	}
	return lsn
}

// source sets up a publication over tables and returns the runner's
// configuration.
func (u *upstream) source(slot string, tables ...string) Config {
	u.t.Helper()
	ctx := context.Background()
	ts, err := Discover(ctx, u.conn, "", tables)
	if err != nil {
		u.t.Fatal(err)
	}
	pub := slot + "_pub"
	if err := EnsurePublication(ctx, u.conn, pub, ts); err != nil {
		u.t.Fatal(err)
	}
	return Config{ConnString: u.dsn, Slot: slot, Publication: pub, Tables: ts, MaxBatchDelay: 20 * time.Millisecond}
}

// running is a runner in a goroutine, with the states it reported.
type running struct {
	cancel context.CancelFunc
	done   chan error
	mu     sync.Mutex
	states []string
}

func start(cfg Config, target Target) *running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	runner := NewRunner(cfg, target, func(state, detail string) {
		r.mu.Lock()
		r.states = append(r.states, state+": "+detail)
		r.mu.Unlock()
	})
	go func() { r.done <- runner.Run(ctx) }()
	return r
}

func (r *running) stop(t testing.TB) {
	t.Helper()
	r.cancel()
	if err := <-r.done; err != nil {
		t.Fatalf("runner: %v", err)
	}
}

func (r *running) saw(prefix string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.states {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// caughtUp waits until every table of target equals upstream.
func caughtUp(t testing.TB, u *upstream, target *memTarget, r *running) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		diff := ""
		for i := range target.tables {
			want, got := u.text(&target.tables[i]), target.text(i)
			if want != got {
				diff = fmt.Sprintf("table %s:\nupstream:\n%s\nRockStream:\n%s", target.tables[i].Name, want, got)
				break
			}
		}
		if diff == "" {
			return
		}
		select {
		case err := <-r.done:
			t.Fatalf("runner stopped: %v\n%s", err, diff)
		default:
		}
		if time.Now().After(deadline) {
			r.mu.Lock()
			t.Fatalf("not caught up after 30s (states %q):\n%s", r.states, diff)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
