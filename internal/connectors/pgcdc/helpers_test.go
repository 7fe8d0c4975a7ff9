package pgcdc

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/connectors"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
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
		defer func() { u.conn.Close(context.Background()) }()
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

// text returns a query's rows as sorted lines, columns separated by |,
// NULL as \N.
func (u *upstream) text(q string) string {
	u.t.Helper()
	res := u.conn.ExecParams(context.Background(), q, nil, nil, nil, nil).Read()
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

// rs is a RockStream engine with its connector manager.
type rs struct {
	t    testing.TB
	eng  *runtime.Engine
	sess *runtime.Session
	mgr  *connectors.Manager
}

func newRS(t testing.TB, eng *runtime.Engine) *rs {
	r := &rs{t: t, eng: eng, sess: eng.NewSession()}
	r.mgr = connectors.Start(eng, connectors.Options{MinBackoff: 50 * time.Millisecond, MaxBackoff: time.Second})
	return r
}

func (r *rs) close() {
	r.mgr.Close()
	r.eng.Close()
}

func (r *rs) exec(q string) *runtime.Result {
	r.t.Helper()
	res, err := r.sess.Exec(context.Background(), q, nil)
	if err != nil {
		r.t.Fatalf("%s: %v", q, err)
	}
	return res
}

// text returns a query's rows as sorted lines in upstream.text's form.
func (r *rs) text(q string) string {
	r.t.Helper()
	res := r.exec(q)
	var lines []string
	for _, row := range res.Rows {
		parts := make([]string, len(row))
		for j, v := range row {
			if v.IsNull() {
				parts[j] = `\N`
			} else {
				parts[j] = types.Format(v, res.Columns[j].Type)
			}
		}
		lines = append(lines, strings.Join(parts, "|"))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// status returns the source's state and last error.
func (r *rs) status(name string) (string, string) {
	r.t.Helper()
	res := r.exec("SELECT state, last_error FROM rockstream_catalog.sources WHERE name = '" + name + "'")
	if len(res.Rows) != 1 {
		r.t.Fatalf("source %s: %d rows in rockstream_catalog.sources", name, len(res.Rows))
	}
	last := ""
	if !res.Rows[0][1].IsNull() {
		last = res.Rows[0][1].Str()
	}
	return res.Rows[0][0].Str(), last
}

// progress returns the LSN the source committed last.
func (r *rs) progress(name string) pglogrepl.LSN {
	r.t.Helper()
	raw, err := r.eng.SourceProgress(name)
	if err != nil {
		r.t.Fatal(err)
	}
	p, ok, err := DecodeProgress(raw)
	if err != nil || !ok {
		r.t.Fatalf("progress of %s: %v %v", name, ok, err)
	}
	return p.LSN
}

// caughtUp waits until each pair of a RockStream query and an upstream
// query agree.
func caughtUp(t testing.TB, u *upstream, r *rs, source string, pairs ...string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		diff := ""
		for i := 0; i < len(pairs); i += 2 {
			want, got := u.text(pairs[i+1]), r.text(pairs[i])
			if want != got {
				diff = fmt.Sprintf("%s:\nupstream:\n%s\nRockStream:\n%s", pairs[i], want, got)
				break
			}
		}
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			state, last := r.status(source)
			t.Fatalf("not caught up after 60s (source %s: %s %s):\n%s", source, state, last, diff)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// same is the pair of queries comparing table name in both systems.
func same(name string) []string {
	return []string{"SELECT * FROM " + name, "SELECT * FROM " + name}
}

// checkFlushed checks that the slot was never acknowledged past what
// RockStream committed.
func checkFlushed(t testing.TB, u *upstream, r *rs, source, slot string) {
	t.Helper()
	if f, p := u.slotFlushed(slot), r.progress(source); f > p {
		t.Errorf("slot confirmed %s, past the committed %s", f, p)
	}
}
