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
	// Binding ON CONFLICT leaves the statement as it was for the next
	// execution (EXCLUDED.b once became NULL there).
	for _, b := range []string{"dos", "tres"} {
		if res, err := s.ExecPrepared(ctx, p, params(p, "1", b)); err != nil || formatRows(res) != "1|"+b+"\n" {
			t.Fatalf("upsert again: %v %v", res, err)
		}
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
	if _, err := s.Exec(ctx, "CREATE ROLE x REPLICATION", nil); errs.SQLState(err) != "0A000" {
		t.Errorf("REPLICATION: %v", err)
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

// TestPreparedInsertKeepsBinding checks that a prepared INSERT of
// parameters and literals is bound once and run with each execution's
// values, bound again after DDL, and that other INSERTs keep nothing.
func TestPreparedInsertKeepsBinding(t *testing.T) {
	ctx := context.Background()
	s, mustExec := memorySession(t)
	mustExec("CREATE TABLE t (a int PRIMARY KEY, b text DEFAULT 'd', c numeric(4,1))")
	p, err := s.Prepare("INSERT INTO t (a, c, b) VALUES ($1, $2, 'lit'), ($1 + 100, 1.25, DEFAULT)", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = s.ExecPrepared(ctx, p, []types.Value{types.MakeInt(types.Int4, 100), types.Null}); err != nil {
		t.Fatal(err)
	}
	if p.insert != nil {
		t.Fatalf("an INSERT with an expression ($1 + 100) keeps its binding")
	}
	mustExec("DELETE FROM t")
	p, err = s.Prepare("INSERT INTO t (a, c, b) VALUES ($1, $2, 'lit'), ($3, 1.25, DEFAULT)", nil)
	if err != nil {
		t.Fatal(err)
	}
	num := func(text string) types.Value {
		v, err := types.Parse(types.Of(types.Numeric), text)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	run := func(a, c, a2 int64) error {
		_, err := s.ExecPrepared(ctx, p, []types.Value{types.MakeInt(types.Int4, a), num(fmt.Sprint(c) + ".04"), types.MakeInt(types.Int4, a2)})
		return err
	}
	if err := run(1, 10, 2); err != nil {
		t.Fatal(err)
	}
	if p.insert == nil || p.insert.bi == nil {
		t.Fatal("the INSERT keeps no binding")
	}
	kept := p.insert.bi
	if err := run(3, 30, 4); err != nil {
		t.Fatal(err)
	}
	if err := run(5, 1000, 6); errs.SQLState(err) != "22003" {
		t.Fatalf("numeric(4,1) overflow: %v", err)
	}
	if err := run(7, 70, 7); errs.SQLState(err) != "23505" {
		t.Fatalf("duplicate key within the statement: %v", err)
	}
	if p.insert.bi != kept {
		t.Fatal("the INSERT was bound again without DDL")
	}
	res, err := s.Exec(ctx, "SELECT a, b, c FROM t ORDER BY a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := formatRows(res), "1|lit|10.0\n2|d|1.3\n3|lit|30.0\n4|d|1.3\n"; got != want {
		t.Fatalf("rows:\n%swant:\n%s", got, want)
	}
	mustExec("DROP TABLE t")
	mustExec("CREATE TABLE t (c text, b int, a int PRIMARY KEY)")
	if err := run(8, 80, 9); errs.SQLState(err) != "22P02" {
		t.Fatalf("'lit' into an integer column after DDL: %v", err)
	}
	mustExec("DROP TABLE t")
	mustExec("CREATE TABLE t (c text, b text DEFAULT 'new', a int PRIMARY KEY)")
	if err := run(8, 80, 9); err != nil {
		t.Fatal(err)
	}
	if p.insert.bi == kept {
		t.Fatal("the INSERT kept its binding across DDL")
	}
	res, err = s.Exec(ctx, "SELECT a, b, c FROM t ORDER BY a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := formatRows(res), "8|lit|80.04\n9|new|1.25\n"; got != want {
		t.Fatalf("rows after DDL:\n%swant:\n%s", got, want)
	}
}
