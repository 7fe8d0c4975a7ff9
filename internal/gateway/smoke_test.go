package gateway

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestSmoke(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe, pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol} {
		c := ts.connect(t, mode)
		var n int32
		var s string
		if err := c.QueryRow(ctx, "SELECT 1 + $1::int4, 'x' || $2", 41, "y").Scan(&n, &s); err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		t.Log(mode, n, s)
	}
}
