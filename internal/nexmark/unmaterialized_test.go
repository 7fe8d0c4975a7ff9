package nexmark_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/nexmark"
	"github.com/rockstream/rockstream/internal/oracle"
)

// TestUnmaterializedMatchPostgres is TestQueriesMatchPostgres with
// RockStream's bid table declared APPEND ONLY WITH (materialized = false)
// (person and auction have primary keys and stay materialized): it keeps
// no rows, and every view over them must still equal
// PostgreSQL's (whose tables store them) after every transaction. The
// queries run ad hoc over the final tables must fail with 0A000 saying the
// table keeps no rows if they read bid, and equal PostgreSQL's if not.
// It runs once for each of oracle.TestWorkers' worker counts.
func TestUnmaterializedMatchPostgres(t *testing.T) {
	t.Parallel()
	for _, n := range oracle.TestWorkers() {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			r := newRun(t, ctx, beforeMidnight)
			r.unmaterialized = true
			sut, err := oracle.OpenRockStream(n)
			if err != nil {
				t.Fatal(err)
			}
			defer sut.Close()
			r.sut = sut
			r.setUp()
			r.stream(*eventsFlag)
			if t.Failed() {
				return
			}
			r.checkLateRows()
			for _, q := range nexmark.Queries() {
				if q.Unsupported != "" {
					continue
				}
				got, err := sut.Observe(ctx, q.SQL)
				if readsBid(q.SQL) {
					var e *oracle.Error
					if !errors.As(err, &e) || e.SQLState != "0A000" || !strings.Contains(e.Message, "keeps no rows") {
						t.Errorf("%s as a query over a table that keeps no rows: got %v, want 0A000 saying so", q.Name, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("rockstream: %s as a query: %v", q.Name, err)
				}
				want, err := r.ref.Observe(ctx, q.Postgres)
				if err != nil {
					t.Fatalf("postgres: %s: %v", q.Name, err)
				}
				if d := oracle.DiffMultisets(want.Rows, got.Rows); !d.Empty() {
					t.Errorf("%s as a query differs from PostgreSQL:\n%s", q.Name, d.Format("postgres", "rockstream"))
				}
			}
		})
	}
}

// TestUnmaterializedSurviveRestart is TestQueriesSurviveRestart with
// unmaterialized event tables: after the durable instance is reopened
// (on one worker before, three after), the views equal PostgreSQL's and
// keep doing so as the stream goes on, though the tables never stored a
// row.
func TestUnmaterializedSurviveRestart(t *testing.T) { checkSurvivesRestart(t, true) }

// readsBid reports whether a query's text names the bid table.
func readsBid(sql string) bool {
	for _, f := range strings.FieldsFunc(strings.ToLower(sql), func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if f == "bid" {
			return true
		}
	}
	return false
}
