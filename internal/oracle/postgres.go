package oracle

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Engine is one system a script runs on: a session that runs the script's
// statements, and an observer session that reads committed state between
// them (so a view is compared as other clients see it, never through the
// script's open transaction).
type Engine interface {
	// Name names the system in reports.
	Name() string
	// Exec runs one statement in the script's session. A statement that
	// fails returns an *Error; any other error means the system could not
	// be reached and ends the run.
	Exec(ctx context.Context, sql string) (*Result, error)
	// Observe runs one read-only statement in the observer session, with
	// Exec's error convention.
	Observe(ctx context.Context, sql string) (*Result, error)
	// Close releases the sessions.
	Close() error
}

// sessionParams are the settings both PostgreSQL sessions run with, so
// that its text output is the one RockStream is compatible with:
// timestamptz in UTC, ISO dates, the postgres interval style, and floats
// in their shortest round-trip form.
var sessionParams = map[string]string{
	"TimeZone":           "UTC",
	"DateStyle":          "ISO, MDY",
	"IntervalStyle":      "postgres",
	"extra_float_digits": "1",
	"client_encoding":    "UTF8",
	"statement_timeout":  "60000",
}

// Postgres runs scripts on a PostgreSQL database, emulating materialized
// views with plain views (always fresh) plus the rule that a
// materialized view's query must evaluate without error: a statement or
// transaction after which some materialized view's query fails is rolled
// back and fails with that query's error, as RockStream's incremental
// maintenance does. Outside a transaction block the views are checked
// after each statement; inside one, at COMMIT.
type Postgres struct {
	name     string
	script   *pgconn.PgConn
	observer *pgconn.PgConn
	// matviews holds the names created as materialized views. A name whose
	// view no longer exists is skipped by the checks.
	matviews map[string]bool
}

var _ Engine = (*Postgres)(nil)

// ConnectPostgres opens the two sessions of a Postgres engine on the
// database at dsn. name names it in reports. Settings in dsn (such as
// search_path or statement_timeout) take precedence over the defaults.
func ConnectPostgres(ctx context.Context, name, dsn string) (*Postgres, error) {
	connect := func(extra map[string]string) (*pgconn.PgConn, error) {
		cfg, err := pgconn.ParseConfig(dsn)
		if err != nil {
			return nil, err
		}
		for k, v := range sessionParams {
			if _, ok := cfg.RuntimeParams[k]; !ok {
				cfg.RuntimeParams[k] = v
			}
		}
		for k, v := range extra {
			cfg.RuntimeParams[k] = v
		}
		return pgconn.ConnectConfig(ctx, cfg)
	}
	script, err := connect(nil)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	// The observer must not wait behind the script's locks (DDL in an open
	// transaction): it fails instead.
	observer, err := connect(map[string]string{"lock_timeout": "5000"})
	if err != nil {
		script.Close(ctx)
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	return &Postgres{name: name, script: script, observer: observer, matviews: map[string]bool{}}, nil
}

// Name implements Engine.
func (p *Postgres) Name() string { return p.name }

// Close implements Engine.
func (p *Postgres) Close() error {
	ctx := context.Background()
	return errors.Join(p.script.Close(ctx), p.observer.Close(ctx))
}

// Observe implements Engine.
func (p *Postgres) Observe(ctx context.Context, sql string) (*Result, error) {
	return run(ctx, p.observer, sql)
}

// Exec implements Engine.
func (p *Postgres) Exec(ctx context.Context, sql string) (*Result, error) {
	info := classify(sql)
	text, ok := postgresText(sql, info)
	if !ok {
		return nil, fmt.Errorf("cannot rewrite %q for PostgreSQL: a materialized-view statement must start with its keywords", sql)
	}
	switch info.kind {
	case kindQuery, kindBegin, kindRollback:
		return run(ctx, p.script, text)
	case kindCommit:
		if p.script.TxStatus() == 'T' {
			if verr, err := p.checkViews(ctx); err != nil {
				return nil, err
			} else if verr != nil {
				if _, err := run(ctx, p.script, "ROLLBACK"); err != nil {
					return nil, err
				}
				return nil, verr
			}
		}
		return run(ctx, p.script, text)
	}

	if info.kind == kindDropMatView || info.kind == kindDropView {
		if werr, err := p.checkDropKind(ctx, info); err != nil || werr != nil {
			if err == nil {
				err = werr
			}
			return nil, err
		}
	}

	if p.script.TxStatus() != 'I' {
		// In a transaction block: the views are checked at COMMIT.
		res, err := run(ctx, p.script, text)
		p.noteCreated(info, err)
		if err == nil && info.kind == kindCreateMatView {
			if n, ok, cerr := p.countInBlock(ctx, info.name); cerr != nil {
				return nil, cerr
			} else if ok {
				res.Tag = fmt.Sprintf("SELECT %d", n)
			}
		}
		return p.fixTag(info, res), err
	}
	if len(p.matviews) == 0 && info.kind != kindCreateMatView {
		res, err := run(ctx, p.script, text)
		p.noteCreated(info, err)
		return p.fixTag(info, res), err
	}

	// Outside a block with materialized views to keep valid: run the
	// statement in its own transaction, check the views, and commit only
	// if they all evaluate.
	if _, err := run(ctx, p.script, "BEGIN"); err != nil {
		return nil, err
	}
	res, err := run(ctx, p.script, text)
	if err != nil {
		if _, rerr := run(ctx, p.script, "ROLLBACK"); rerr != nil {
			return nil, rerr
		}
		return nil, err
	}
	p.noteCreated(info, nil)
	var created int
	if info.kind == kindCreateMatView {
		// PostgreSQL's tag for CREATE MATERIALIZED VIEW is "SELECT n".
		r, verr := run(ctx, p.script, "SELECT * FROM "+quoteIdent(info.name))
		var e *Error
		if errors.As(verr, &e) {
			if _, rerr := run(ctx, p.script, "ROLLBACK"); rerr != nil {
				return nil, rerr
			}
			return nil, verr
		} else if verr != nil {
			return nil, verr
		}
		created = len(r.Rows)
	}
	verr, err := p.checkViews(ctx)
	if err != nil {
		return nil, err
	}
	if verr != nil {
		if _, err := run(ctx, p.script, "ROLLBACK"); err != nil {
			return nil, err
		}
		return nil, verr
	}
	if _, err := run(ctx, p.script, "COMMIT"); err != nil {
		return nil, err
	}
	if info.kind == kindCreateMatView {
		res.Tag = fmt.Sprintf("SELECT %d", created)
	}
	return p.fixTag(info, res), nil
}

// countInBlock counts the rows of the view just created in the script's
// transaction block, for CREATE MATERIALIZED VIEW's tag, under a
// savepoint so that a view whose query fails leaves the block as it was
// (ok false: the tag stays PostgreSQL's own).
func (p *Postgres) countInBlock(ctx context.Context, name string) (n int, ok bool, err error) {
	if _, err := run(ctx, p.script, "SAVEPOINT oracle_count"); err != nil {
		return 0, false, err
	}
	r, verr := run(ctx, p.script, "SELECT * FROM "+quoteIdent(name))
	var e *Error
	if errors.As(verr, &e) {
		_, err := run(ctx, p.script, "ROLLBACK TO SAVEPOINT oracle_count")
		return 0, false, err
	} else if verr != nil {
		return 0, false, verr
	}
	if _, err := run(ctx, p.script, "RELEASE SAVEPOINT oracle_count"); err != nil {
		return 0, false, err
	}
	return len(r.Rows), true, nil
}

// noteCreated records the outcome of a successful CREATE [MATERIALIZED]
// VIEW.
func (p *Postgres) noteCreated(info stmtInfo, err error) {
	if err != nil {
		return
	}
	switch info.kind {
	case kindCreateMatView:
		p.matviews[info.name] = true
	case kindCreateView:
		delete(p.matviews, info.name)
	}
}

// checkDropKind fails a DROP VIEW that names an (emulated) materialized
// view, and a DROP MATERIALIZED VIEW that names a plain view, as
// PostgreSQL does: after the rewrite both are plain views to it. werr is
// the statement's failure; err a connection failure.
func (p *Postgres) checkDropKind(ctx context.Context, info stmtInfo) (werr, err error) {
	if p.script.TxStatus() == 'E' || len(info.dropped) == 0 {
		return nil, nil // the statement fails anyway, or has nothing to check
	}
	views, err := run(ctx, p.script,
		"SELECT relname FROM pg_class WHERE relkind = 'v' AND relnamespace = current_schema()::regnamespace AND relname IN ("+
			quoteLiterals(info.dropped)+")")
	if err != nil {
		return nil, err
	}
	exists := map[string]bool{}
	for _, row := range views.Rows {
		exists[*row[0]] = true
	}
	for _, name := range info.dropped {
		if !exists[name] {
			continue
		}
		var msg string
		switch {
		case info.kind == kindDropView && p.matviews[name]:
			msg = fmt.Sprintf("%q is not a view", name)
		case info.kind == kindDropMatView && !p.matviews[name]:
			msg = fmt.Sprintf("%q is not a materialized view", name)
		default:
			continue
		}
		// Raise it in PostgreSQL, so that an open transaction block is
		// aborted as the real failure would abort it.
		_, err := run(ctx, p.script, "DO $oracle$ BEGIN RAISE EXCEPTION USING ERRCODE = '42809', MESSAGE = "+
			quoteLiterals([]string{msg})+"; END $oracle$")
		var e *Error
		if errors.As(err, &e) {
			return err, nil
		}
		if err == nil {
			err = errors.New("RAISE EXCEPTION did not fail")
		}
		return nil, err
	}
	return nil, nil
}

// fixTag gives the tag PostgreSQL would have printed for the statement
// before the materialized-view rewrite.
func (p *Postgres) fixTag(info stmtInfo, res *Result) *Result {
	if res != nil && info.kind == kindDropMatView {
		res.Tag = "DROP MATERIALIZED VIEW"
	}
	return res
}

// checkViews evaluates every materialized view's query in the script's
// session. It returns the first failure as verr (the transaction is then
// aborted); err reports a connection failure.
func (p *Postgres) checkViews(ctx context.Context) (verr, err error) {
	if len(p.matviews) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(p.matviews))
	for n := range p.matviews {
		names = append(names, n)
	}
	sort.Strings(names)
	exist, err := run(ctx, p.script,
		"SELECT relname FROM pg_class WHERE relkind = 'v' AND relnamespace = current_schema()::regnamespace AND relname IN ("+
			quoteLiterals(names)+") ORDER BY relname")
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return err, nil
		}
		return nil, err
	}
	for _, row := range exist.Rows {
		name := *row[0]
		_, err := run(ctx, p.script, "SELECT * FROM "+quoteIdent(name))
		var e *Error
		if errors.As(err, &e) {
			return &Error{SQLState: e.SQLState, Message: fmt.Sprintf("%s (maintaining materialized view %s)", e.Message, name)}, nil
		} else if err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// ViewFailure supports engines that report a materialized view's
// failure at the statement that causes it rather than at COMMIT. Inside a
// transaction block, it evaluates the materialized views as of now and
// returns the first failure (nil when they all evaluate), leaving the
// transaction as it was. Outside a block it returns nil.
func (p *Postgres) ViewFailure(ctx context.Context) (*Error, error) {
	if p.script.TxStatus() != 'T' || len(p.matviews) == 0 {
		return nil, nil
	}
	if _, err := run(ctx, p.script, "SAVEPOINT oracle_view_check"); err != nil {
		return nil, err
	}
	verr, err := p.checkViews(ctx)
	if err != nil {
		return nil, err
	}
	if verr != nil {
		if _, err := run(ctx, p.script, "ROLLBACK TO SAVEPOINT oracle_view_check"); err != nil {
			return nil, err
		}
	}
	if _, err := run(ctx, p.script, "RELEASE SAVEPOINT oracle_view_check"); err != nil {
		return nil, err
	}
	var e *Error
	if errors.As(verr, &e) {
		return e, nil
	}
	return nil, nil
}

// run executes one statement and reads its whole result as text.
func run(ctx context.Context, conn *pgconn.PgConn, sql string) (*Result, error) {
	mrr := conn.Exec(ctx, sql)
	var (
		out  *Result
		last error
	)
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		r := &Result{}
		if fds := rr.FieldDescriptions(); fds != nil {
			r.Columns = make([]Column, len(fds))
			for i, fd := range fds {
				r.Columns[i] = Column{Name: fd.Name, TypeOID: fd.DataTypeOID}
			}
		}
		for rr.NextRow() {
			vals := rr.Values()
			row := make([]*string, len(vals))
			for i, v := range vals {
				if v != nil {
					s := string(v)
					row[i] = &s
				}
			}
			r.Rows = append(r.Rows, row)
		}
		tag, err := rr.Close()
		if err != nil {
			last = err
			continue
		}
		r.Tag = tag.String()
		out = r
	}
	if err := mrr.Close(); err != nil {
		last = err
	}
	if last != nil {
		var pe *pgconn.PgError
		if errors.As(last, &pe) {
			return nil, &Error{SQLState: pe.Code, Message: pe.Message}
		}
		return nil, fmt.Errorf("PostgreSQL: %w", last)
	}
	if out == nil {
		out = &Result{}
	}
	return out, nil
}

// quoteIdent quotes a name as a PostgreSQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// quoteLiterals renders names as a comma-separated list of string
// literals.
func quoteLiterals(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + strings.ReplaceAll(n, "'", "''") + "'"
	}
	return strings.Join(q, ", ")
}
