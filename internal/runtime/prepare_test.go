package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
)

// describePrepared prints a prepared statement's parameter and column
// types, or its error's SQLSTATE and message.
func describePrepared(p *Prepared, err error) string {
	if err != nil {
		return fmt.Sprintf("error %s: %v", errs.SQLState(err), err)
	}
	var params, cols []string
	for _, t := range p.ParamTypes {
		params = append(params, t.String())
	}
	for _, c := range p.Columns {
		cols = append(cols, c.Name+" "+c.Type.String())
	}
	s := fmt.Sprintf("params (%s) columns (%s)", strings.Join(params, ", "), strings.Join(cols, ", "))
	if p.Columns == nil {
		s = fmt.Sprintf("params (%s) no rows", strings.Join(params, ", "))
	}
	if p.RowsUnknown {
		s += " rows known when run"
	}
	return s
}

func TestPrepare(t *testing.T) {
	ctx := context.Background()
	e := OpenMemory()
	defer e.Close()
	s := e.NewSession()
	defer s.Close()
	for _, q := range []string{
		"CREATE TABLE t (a int PRIMARY KEY, b text, c numeric(6,2))",
		"CREATE MATERIALIZED VIEW mv AS SELECT a, c FROM t",
		"INSERT INTO t VALUES (1, 'one', 1.5), (2, 'two', 2.5), (3, 'three', NULL)",
	} {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	int8 := types.Of(types.Int8)
	for _, tc := range []struct {
		query    string
		declared []types.Type
		want     string
	}{
		{"SELECT a, b FROM t WHERE a = $1 AND c > $2", nil, "params (integer, numeric) columns (a integer, b text)"},
		{"SELECT $1", nil, "params (text) columns (?column? text)"},
		{"SELECT $2::int", nil, "error 42P18: could not determine data type of parameter $1"},
		{"SELECT $1", []types.Type{int8}, "params (bigint) columns (?column? bigint)"},
		{"SELECT a FROM t LIMIT $1", nil, "params (bigint) columns (a integer)"},
		{"INSERT INTO t (a, b) VALUES ($1, $2) ON CONFLICT (a) DO UPDATE SET b = EXCLUDED.b RETURNING *", nil,
			"params (integer, text) columns (a integer, b text, c numeric(6,2))"},
		{"INSERT INTO t (b, a) SELECT $1, $2", nil, "params (text, integer) no rows"},
		{"UPDATE t SET b = $2 WHERE a = $1", nil, "params (integer, text) no rows"},
		{"DELETE FROM t WHERE c < $1 RETURNING a + 1 AS next", nil, "params (numeric) columns (next integer)"},
		{"SELECT * FROM mv AS OF EPOCH 1", nil, "params () columns (a integer, c numeric(6,2))"},
		{"SHOW TimeZone", nil, "params () columns (TimeZone text)"},
		{"SHOW ALL", nil, "params () columns (name text, setting text, description text)"},
		{"BEGIN", nil, "params () no rows"},
		{"SUBSCRIBE mv", nil, "params () columns (epoch bigint, diff bigint, a integer, c numeric(6,2))"},
		{"SUBSCRIBE mv WITH (PROGRESS)", nil, "params () columns (epoch bigint, progressed boolean, diff bigint, a integer, c numeric(6,2))"},
		{"SUBSCRIBE nothing", nil, "params () no rows rows known when run"},
		{"COPY t TO STDOUT", nil, "params () no rows rows known when run"},
		{"SELECT nope FROM t", nil, `error 42703: column "nope" does not exist`},
		{"SELECT 1; SELECT 2", nil, "error 42601: cannot insert multiple commands into a prepared statement"},
	} {
		got := describePrepared(s.Prepare(tc.query, tc.declared))
		if got != tc.want {
			t.Errorf("Prepare(%q):\n got %s\nwant %s", tc.query, got, tc.want)
		}
	}

	// Declared types are honoured when the statement runs, and LIMIT $1
	// sees its value.
	params := func(p *Prepared, texts ...string) []types.Value {
		t.Helper()
		vals := make([]types.Value, len(texts))
		for i, text := range texts {
			v, err := s.DecodeParam(ctx, p.ParamTypes[i], text)
			if err != nil {
				t.Fatal(err)
			}
			vals[i] = v
		}
		return vals
	}
	p, err := s.Prepare("SELECT $1 AS x", []types.Type{int8})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.ExecPrepared(ctx, p, params(p, "5"))
	if err != nil || res.Columns[0].Type.ID != types.Int8 || formatRows(res) != "5\n" {
		t.Fatalf("ExecPrepared: %v %v", res, err)
	}
	p, err = s.Prepare("SELECT a FROM t ORDER BY a LIMIT $1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.ExecPrepared(ctx, p, params(p, "2")); err != nil || formatRows(res) != "1\n2\n" {
		t.Fatalf("LIMIT $1: %v %v", res, err)
	}
	p, err = s.Prepare("INSERT INTO t (a, b) VALUES ($1, $2) ON CONFLICT (a) DO UPDATE SET b = EXCLUDED.b RETURNING a, b", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.ExecPrepared(ctx, p, params(p, "1", "uno")); err != nil || formatRows(res) != "1|uno\n" {
		t.Fatalf("upsert: %v %v", res, err)
	}

	// Transaction status as ReadyForQuery reports it.
	for _, step := range []struct{ q, status string }{{"BEGIN", "T"}, {"SELECT 1/0", "E"}, {"ROLLBACK", "I"}} {
		_, _ = s.Exec(ctx, step.q, nil)
		if got := string(s.TxnStatus()); got != step.status {
			t.Errorf("after %s: status %s, want %s", step.q, got, step.status)
		}
	}
}

func TestRolesAreDurable(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	e, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := e.NewSession()
	var notices []string
	s.OnNotice(func(n Notice) { notices = append(notices, n.Severity+" "+n.SQLState+" "+n.Message) })
	for _, q := range []string{
		"CREATE ROLE admin WITH LOGIN SUPERUSER PASSWORD 'a'",
		"CREATE ROLE reader",
		"ALTER ROLE reader WITH LOGIN PASSWORD 'SCRAM-SHA-256$4096:c2FsdA==$iSyRa/DhRmlWJT3EJcvKnu4Nr5oMDCbRD0pRCyO0Rr8=:hB4qHHEBJzkXc0lF/TX8ZWDtGZFVQbkzGFh9QJ9eJvo='",
		"DROP ROLE IF EXISTS ghost",
		"BEGIN",
		"CREATE ROLE temp",
		"ROLLBACK",
		"COMMIT",
	} {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	want := []string{`NOTICE 42704 role "ghost" does not exist, skipping`, "WARNING 25P01 there is no transaction in progress"}
	if strings.Join(notices, "\n") != strings.Join(want, "\n") {
		t.Errorf("notices = %q, want %q", notices, want)
	}
	if _, err := s.Exec(ctx, "CREATE ROLE x CREATEDB", nil); errs.SQLState(err) != "0A000" {
		t.Errorf("CREATEDB: %v", err)
	}
	s.Close()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	roles, err := e.Roles()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range roles {
		if strings.Contains(r.Verifier, "'") || (r.Verifier != "" && !strings.HasPrefix(r.Verifier, "SCRAM-SHA-256$4096:")) {
			t.Errorf("role %s: verifier %q", r.Name, r.Verifier)
		}
		got = append(got, fmt.Sprintf("%s login=%v superuser=%v password=%v", r.Name, r.CanLogin, r.Superuser, r.Verifier != ""))
	}
	if strings.Join(got, "; ") != "admin login=true superuser=true password=true; reader login=true superuser=false password=true" {
		t.Fatalf("roles after restart: %v", got)
	}
	if r, _ := e.LookupRole("reader"); r == nil || !strings.HasSuffix(r.Verifier, "QJ9eJvo=") {
		t.Fatalf("a verifier given as the password is stored as given: %+v", r)
	}
}
