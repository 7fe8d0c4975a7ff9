package pgcdc

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/runtime"
)

// slowTarget is an engine target whose commits take delay, as a slow disk
// would make them.
type slowTarget struct {
	*EngineTarget
	delay   time.Duration
	commits atomic.Int64
}

func (s *slowTarget) Apply(ctx context.Context, ops []Op, progress []byte) error {
	time.Sleep(s.delay)
	err := s.EngineTarget.Apply(ctx, ops, progress)
	s.commits.Add(1)
	return err
}

// TestSlowCommitKeepsConnection commits batches that take longer than the
// WAL sender's timeout: the runner keeps reporting its position while it
// waits, so PostgreSQL keeps the connection.
func TestSlowCommitKeepsConnection(t *testing.T) {
	u := newUpstream(t, "slow_slot")
	r := newRS(t, runtime.OpenMemory())
	defer r.close()
	u.exec(`CREATE TABLE s (id int PRIMARY KEY)`)
	r.exec(`CREATE TABLE s (id int PRIMARY KEY)`)
	cfg := Config{ConnString: u.dsn + "&options=-c%20wal_sender_timeout%3D500", Slot: "slow_slot", Publication: "slow_pub",
		StatusInterval: 100 * time.Millisecond}
	var err error
	if cfg.Tables, err = Discover(context.Background(), u.conn, "", []string{"s"}); err != nil {
		t.Fatal(err)
	}
	if err := EnsurePublication(context.Background(), u.conn, "slow_pub", "slow", cfg.Tables); err != nil {
		t.Fatal(err)
	}
	target := &slowTarget{EngineTarget: NewEngineTarget(r.eng, "slow", cfg.Tables, []string{"s"}), delay: 1200 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := NewRunner(cfg, target, nil).RunOnce(ctx)
		done <- err
	}()
	for i := 0; i <= 3; i++ {
		if i > 0 {
			u.exec(`INSERT INTO s SELECT coalesce(max(id), 0) + 1 FROM s`)
		}
		// Commit 0 is the snapshot's; each insert then makes one.
		for target.commits.Load() < int64(i+1) {
			select {
			case err := <-done:
				t.Fatalf("the runner stopped during a slow commit: %v", err)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	cancel()
	<-done
	if got := r.text("SELECT * FROM s"); got != "1\n2\n3" {
		t.Errorf("s = %q", got)
	}
}
