package runtime

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rockstream/rockstream/internal/types"
)

// TestPointReadsSeeEveryCommit: prepared point reads by key of a view on
// durable storage (whose iterators are kept between reads) see every
// commit acknowledged before they start: one session's own commits
// between two of its reads, another session's, in a transaction block
// (the last committed epoch, then the block's own write, and after a
// ROLLBACK the committed value again), while AS OF EPOCH reads keep
// reading the epoch they name.
func TestPointReadsSeeEveryCommit(t *testing.T) {
	ctx := context.Background()
	e := openEngineIn(t, t.TempDir())
	defer e.Close()
	reader, writer := e.NewSession(), e.NewSession()
	execAll(t, writer,
		"CREATE TABLE t (id bigint PRIMARY KEY, x int)",
		"CREATE MATERIALIZED VIEW v AS SELECT id, count(*) AS n, sum(x) AS s FROM t GROUP BY id",
		"INSERT INTO t SELECT g, 0 FROM generate_series(1, 100) g")
	p, err := reader.Prepare("SELECT s FROM v WHERE id = $1", []types.Type{types.Of(types.Int8)})
	if err != nil {
		t.Fatal(err)
	}
	read := func(s *Session, id int64) string {
		t.Helper()
		res, err := s.ExecPrepared(ctx, p, []types.Value{types.MakeInt(types.Int8, id)})
		if err != nil {
			t.Fatal(err)
		}
		return formatRows(res)
	}
	check := func(what string, got, want string) {
		t.Helper()
		if got != want {
			t.Fatalf("%s: read %q, want %q", what, got, want)
		}
	}
	epochs := map[int]uint64{}
	for round := 1; round <= 20; round++ {
		id := int64(round%3 + 1)
		check(fmt.Sprintf("round %d, before", round), read(reader, id), fmt.Sprintf("%d\n", (round-1)*int(id)))
		// The same session's commit, then another session's.
		by := reader
		if round%2 == 0 {
			by = writer
		}
		execAll(t, by, fmt.Sprintf("UPDATE t SET x = %d WHERE id BETWEEN 1 AND 3", round))
		epochs[round] = e.Epoch()
		check(fmt.Sprintf("round %d, after", round), read(reader, id), fmt.Sprintf("%d\n", round))
		execAll(t, writer, fmt.Sprintf("UPDATE t SET x = %d * id WHERE id BETWEEN 1 AND 3", round))
	}
	check("AS OF EPOCH", formatRows(mustExec(t, reader, fmt.Sprintf("SELECT s FROM v WHERE id = 2 AS OF EPOCH %d", epochs[7]))), "7\n")
	check("after AS OF EPOCH", read(reader, 2), "40\n")

	execAll(t, reader, "BEGIN")
	check("in a block", read(reader, 2), "40\n")
	execAll(t, writer, "UPDATE t SET x = 41 WHERE id = 2")
	check("in a block, after another session's commit", read(reader, 2), "41\n")
	execAll(t, reader, "UPDATE t SET x = 42 WHERE id = 2")
	check("in a block, after its own write", read(reader, 2), "42\n")
	execAll(t, reader, "ROLLBACK")
	check("after ROLLBACK", read(reader, 2), "41\n")
	check("another session after ROLLBACK", read(writer, 2), "41\n")
}

// TestPointReadsSeeCommitsOfOtherSessions: sessions reading by key on
// many goroutines, while another session commits a rising value, never
// read a value older than the last commit acknowledged before their
// read started (run under -race too).
func TestPointReadsSeeCommitsOfOtherSessions(t *testing.T) {
	ctx := context.Background()
	e := openEngineIn(t, t.TempDir())
	defer e.Close()
	writer := e.NewSession()
	execAll(t, writer,
		"CREATE TABLE t (id bigint PRIMARY KEY, x int)",
		"CREATE MATERIALIZED VIEW v AS SELECT id, sum(x) AS s FROM t GROUP BY id",
		"INSERT INTO t SELECT g, 0 FROM generate_series(1, 50) g")
	var acked atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		s := e.NewSession()
		p, err := s.Prepare("SELECT s FROM v WHERE id = 7", nil)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				want := acked.Load()
				res, err := s.ExecPrepared(ctx, p, nil)
				if err != nil {
					t.Error(err)
					return
				}
				var got int64
				if _, err := fmt.Sscan(formatRows(res), &got); err != nil {
					t.Error(err)
					return
				}
				if got < want {
					t.Errorf("read %d after the commit of %d was acknowledged", got, want)
					return
				}
			}
		}()
	}
	for i := int64(1); i <= 60; i++ {
		execAll(t, writer, fmt.Sprintf("UPDATE t SET x = %d WHERE id = 7", i))
		acked.Store(i)
	}
	close(done)
	wg.Wait()
}
