package oracle

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/gateway"
	"github.com/rockstream/rockstream/internal/instance"
	"github.com/rockstream/rockstream/internal/runtime"
)

// Wire runs scripts on a fresh in-memory RockStream instance through its
// PostgreSQL wire gateway on a loopback port, as a client program would:
// the script's session speaks the simple query protocol and the
// observer's the extended query protocol, so a run exercises both.
type Wire struct {
	eng      *runtime.Engine
	srv      *gateway.Server
	served   chan error
	script   *pgconn.PgConn
	observer *pgconn.PgConn
}

var _ Engine = (*Wire)(nil)

// OpenWire starts an instance and its gateway and connects both sessions.
// The instance's circuits step on n workers (WorkerOptions).
func OpenWire(ctx context.Context, n int) (w *Wire, err error) {
	eng, err := instance.Open(instance.Options(WorkerOptions(n)))
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, errors.Join(err, eng.Close())
	}
	w = &Wire{eng: eng, srv: gateway.New(eng, gateway.Config{}), served: make(chan error, 1)}
	go func() { w.served <- w.srv.Serve(ln) }()
	defer func() {
		if err != nil {
			err = errors.Join(err, w.Close())
		}
	}()
	dsn := fmt.Sprintf("postgres://oracle@%s/rockstream?sslmode=disable", ln.Addr())
	if w.script, err = pgconn.Connect(ctx, dsn); err != nil {
		return w, fmt.Errorf("connecting to the gateway: %w", err)
	}
	if w.observer, err = pgconn.Connect(ctx, dsn); err != nil {
		return w, fmt.Errorf("connecting to the gateway: %w", err)
	}
	return w, nil
}

// Name implements Engine.
func (w *Wire) Name() string { return "rockstream (wire)" }

// Exec implements Engine.
func (w *Wire) Exec(ctx context.Context, sql string) (*Result, error) {
	return run(ctx, w.script, sql)
}

// Observe implements Engine, through the extended protocol: Parse and
// Describe of the statement (its columns), then Bind, Execute and Sync.
func (w *Wire) Observe(ctx context.Context, sql string) (*Result, error) {
	sd, err := w.observer.Prepare(ctx, "", sql, nil)
	if err != nil {
		return nil, wireError(err)
	}
	res := w.observer.ExecPrepared(ctx, "", nil, nil, nil).Read()
	if res.Err != nil {
		return nil, wireError(res.Err)
	}
	r := &Result{Tag: res.CommandTag.String()}
	if sd.Fields != nil {
		r.Columns = make([]Column, len(sd.Fields))
		for i, fd := range sd.Fields {
			r.Columns[i] = Column{Name: fd.Name, TypeOID: fd.DataTypeOID}
		}
	}
	for _, vals := range res.Rows {
		row := make([]*string, len(vals))
		for i, v := range vals {
			if v != nil {
				s := string(v)
				row[i] = &s
			}
		}
		r.Rows = append(r.Rows, row)
	}
	return r, nil
}

// wireError converts a statement's error as run does.
func wireError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &Error{SQLState: pe.Code, Message: pe.Message}
	}
	return fmt.Errorf("gateway: %w", err)
}

// Close implements Engine: it closes the sessions, shuts the gateway down
// and closes the instance.
func (w *Wire) Close() error {
	ctx := context.Background()
	var err error
	for _, c := range []*pgconn.PgConn{w.script, w.observer} {
		if c != nil {
			err = errors.Join(err, c.Close(ctx))
		}
	}
	err = errors.Join(err, w.srv.Shutdown(ctx))
	if serr := <-w.served; !errors.Is(serr, gateway.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return errors.Join(err, w.eng.Close())
}
