package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestConcurrentSessions runs sessions side by side (autocommit writes,
// transaction blocks that commit or roll back, reads, statement timeouts
// and abrupt disconnects) and checks that the committed state is exactly
// the committed transactions' and that the server ends clean.
func TestConcurrentSessions(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	setup := ts.connect(t, pgx.QueryExecModeCacheStatement)
	if _, err := setup.Exec(ctx, "CREATE TABLE acct (id int PRIMARY KEY, balance bigint)"); err != nil {
		t.Fatal(err)
	}
	if _, err := setup.Exec(ctx, "CREATE MATERIALIZED VIEW total AS SELECT sum(balance) AS s, count(*) AS n FROM acct"); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 6, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	committed := 0
	errc := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mode := allModes[w%len(allModes)]
			c, err := pgx.ConnectConfig(ctx, func() *pgx.ConnConfig {
				cfg, _ := pgx.ParseConfig(ts.dsn("w", ""))
				cfg.DefaultQueryExecMode = mode
				return cfg
			}())
			if err != nil {
				errc <- err
				return
			}
			defer c.Close(ctx)
			for r := range rounds {
				id := w*1000 + r
				switch r % 4 {
				case 0: // autocommit insert
					if _, err := c.Exec(ctx, "INSERT INTO acct VALUES ($1, 10)", id); err != nil {
						errc <- err
						return
					}
					mu.Lock()
					committed++
					mu.Unlock()
				case 1: // a committed block
					tx, err := c.Begin(ctx)
					if err == nil {
						_, err = tx.Exec(ctx, "INSERT INTO acct VALUES ($1, 10)", id)
					}
					if err == nil {
						err = tx.Commit(ctx)
					}
					if err != nil {
						errc <- err
						return
					}
					mu.Lock()
					committed++
					mu.Unlock()
				case 2: // a rolled-back block that also failed
					tx, err := c.Begin(ctx)
					if err != nil {
						errc <- err
						return
					}
					_, _ = tx.Exec(ctx, "INSERT INTO acct VALUES ($1, 10)", id)
					_, err = tx.Exec(ctx, "INSERT INTO acct VALUES ($1, 10)", id)
					var pe *pgconn.PgError
					if !errors.As(err, &pe) || pe.Code != "23505" {
						errc <- fmt.Errorf("duplicate insert: %v", err)
						return
					}
					if err := tx.Rollback(ctx); err != nil {
						errc <- err
						return
					}
				case 3: // a read of the view
					var s, n int64
					if err := c.QueryRow(ctx, "SELECT coalesce(s, 0), n FROM total").Scan(&s, &n); err != nil {
						errc <- err
						return
					}
					if s != 10*n {
						errc <- fmt.Errorf("view total %d for %d rows", s, n)
						return
					}
				}
			}
		}()
	}
	// Meanwhile, clients that vanish in the middle of a block.
	for i := range 5 {
		r := dialRaw(t, ts.addr, nil)
		r.send(rawQuery("BEGIN"), rawQuery(fmt.Sprintf("INSERT INTO acct VALUES (%d, 999)", 900000+i)))
		time.Sleep(5 * time.Millisecond)
		r.nc.Close()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	var s, n int64
	if err := setup.QueryRow(ctx, "SELECT s, n FROM total").Scan(&s, &n); err != nil {
		t.Fatal(err)
	}
	if n != int64(committed) || s != 10*n {
		t.Fatalf("total %d over %d rows, want %d rows of 10", s, n, committed)
	}
}
