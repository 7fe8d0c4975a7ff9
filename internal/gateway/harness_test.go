package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/instance"
	"github.com/rockstream/rockstream/internal/runtime"
)

// testServer is a gateway on a loopback port over an in-memory engine.
type testServer struct {
	eng  *runtime.Engine
	srv  *Server
	addr string
	done chan error
}

// startServer starts a gateway with cfg; it shuts down when the test ends.
func startServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	eng, err := instance.Open(instance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, eng, ln, cfg)
}

func serveOn(t testing.TB, eng *runtime.Engine, ln net.Listener, cfg Config) *testServer {
	ts := &testServer{eng: eng, srv: New(eng, cfg), addr: ln.Addr().String(), done: make(chan error, 1)}
	go func() { ts.done <- ts.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ts.srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-ts.done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
		if err := eng.Close(); err != nil {
			t.Errorf("engine close: %v", err)
		}
	})
	return ts
}

func (ts *testServer) port() string {
	_, p, _ := net.SplitHostPort(ts.addr)
	return p
}

// dsn returns a connection string for user (and password) on ts.
func (ts *testServer) dsn(user, password string) string {
	s := fmt.Sprintf("postgres://%s@%s/rockstream?sslmode=disable", user, ts.addr)
	if password != "" {
		s = fmt.Sprintf("postgres://%s:%s@%s/rockstream?sslmode=disable", user, password, ts.addr)
	}
	return s
}

func (ts *testServer) connect(t testing.TB, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(ts.dsn("tester", ""))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
