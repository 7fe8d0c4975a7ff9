package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// benchConn starts a gateway with a table of n rows and connects pgx.
func benchConn(b *testing.B, n int, mode pgx.QueryExecMode) *pgx.Conn {
	ts := startServer(b, Config{})
	c := ts.connect(b, mode)
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY, name text, amount numeric(10,2))"); err != nil {
		b.Fatal(err)
	}
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{i, fmt.Sprintf("name %d", i), fmt.Sprintf("%d.25", i)}
	}
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "name", "amount"}, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkPointSelect measures a prepared single-row SELECT round trip.
func BenchmarkPointSelect(b *testing.B) {
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		b.Run(mode.String(), func(b *testing.B) {
			c := benchConn(b, 1000, mode)
			ctx := context.Background()
			var name string
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := c.QueryRow(ctx, "SELECT name FROM t WHERE id = $1", i%1000).Scan(&name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScan measures reading a 10,000-row result in binary format.
func BenchmarkScan(b *testing.B) {
	c := benchConn(b, 10000, pgx.QueryExecModeCacheStatement)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows, err := c.Query(ctx, "SELECT id, name, amount FROM t")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		if rows.Err() != nil || n != 10000 {
			b.Fatalf("%d rows, %v", n, rows.Err())
		}
	}
	b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkPreparedInsert measures autocommit INSERTs through a prepared
// statement (each one epoch, group-committed).
func BenchmarkPreparedInsert(b *testing.B) {
	c := benchConn(b, 0, pgx.QueryExecModeCacheStatement)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Exec(ctx, "INSERT INTO t VALUES ($1, $2, $3)", i, "x", "1.5"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMessageInserts measures a Query message of 100 single-row
// INSERTs, one implicit transaction: one epoch per message.
func BenchmarkMessageInserts(b *testing.B) {
	c := benchConn(b, 0, pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	var msg strings.Builder
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		msg.Reset()
		for j := range 100 {
			fmt.Fprintf(&msg, "INSERT INTO t VALUES (%d, 'x', 1.5);", i*100+j)
		}
		if _, err := c.PgConn().Exec(ctx, msg.String()).ReadAll(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "rows/s")
}
