package runtime

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// copyPeer runs the same COPY statements on a RockStream session and a
// PostgreSQL connection.
type copyPeer struct {
	t   *testing.T
	ctx context.Context
	s   *Session
	pgc *pgconn.PgConn
}

// load runs COPY ... FROM STDIN with data on both sides; both must succeed.
func (p copyPeer) load(stmt, data string) {
	p.t.Helper()
	if _, err := p.pgc.CopyFrom(p.ctx, strings.NewReader(data), stmt); err != nil {
		p.t.Fatalf("PostgreSQL: %s: %v", stmt, err)
	}
	res, err := p.s.Exec(p.ctx, stmt, nil)
	if err == nil {
		_, err = p.s.CopyFrom(p.ctx, res.CopyIn, strings.NewReader(data))
	}
	if err != nil {
		p.t.Fatalf("%s: %v", stmt, err)
	}
}

// copyOut runs COPY ... TO STDOUT on both sides and returns their bytes.
func (p copyPeer) copyOut(stmt string) (ours, theirs []byte) {
	p.t.Helper()
	var want bytes.Buffer
	if _, err := p.pgc.CopyTo(p.ctx, &want, stmt); err != nil {
		p.t.Fatal(err)
	}
	var got bytes.Buffer
	co := mustExec(p.t, p.s, stmt).CopyOut
	defer co.Close()
	for {
		b, err := co.Next(p.ctx)
		if err != nil {
			break
		}
		got.Write(b)
	}
	return got.Bytes(), want.Bytes()
}

// TestArrayCopyMatchesPostgres loads multidimensional arrays and arrays
// with lower bounds other than 1 by COPY in text and CSV, compares COPY TO
// output in text, CSV and binary byte for byte with PostgreSQL's, and
// loads PostgreSQL's binary output back.
func TestArrayCopyMatchesPostgres(t *testing.T) {
	ctx := context.Background()
	pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, "arraycopy"))
	if err != nil {
		t.Fatal(err)
	}
	defer pgc.Close(ctx)
	s := OpenMemory().NewSession()
	p := copyPeer{t: t, ctx: ctx, s: s, pgc: pgc}
	mustBoth(t, s, pgc, "CREATE TABLE ac (id int PRIMARY KEY, g int[], t text[], n numeric[])")
	p.load("COPY ac FROM STDIN", "1\t{{1,2},{3,4}}\t{{a,\"b c\"},{NULL,\"\"}}\t[0:1]={1.5,2}\n"+
		"2\t[0:1][-1:0]={{1,NULL},{3,4}}\t[2:2]={x}\t{{{1}}}\n3\t{}\t\\N\t{{1},{2}}\n")
	p.load("COPY ac FROM STDIN WITH (FORMAT csv)", "4,\"{{5},{6}}\",\"{{\"\"q,\"\"}}\",\"[5:6]={7,8}\"\n")
	for _, opts := range []string{"", " WITH (FORMAT csv)", " WITH (FORMAT binary)"} {
		stmt := "COPY (SELECT * FROM ac ORDER BY id) TO STDOUT" + opts
		if got, want := p.copyOut(stmt); !bytes.Equal(got, want) {
			t.Errorf("%s:\nRockStream: %q\nPostgreSQL: %q", stmt, got, want)
		}
	}
	_, bin := p.copyOut("COPY (SELECT id + 10, g, t, n FROM ac) TO STDOUT WITH (FORMAT binary)")
	p.load("COPY ac FROM STDIN WITH (FORMAT binary)", string(bin))
	if got, want := p.copyOut("COPY (SELECT * FROM ac ORDER BY id) TO STDOUT"); !bytes.Equal(got, want) {
		t.Errorf("after a binary load:\nRockStream: %q\nPostgreSQL: %q", got, want)
	}
}
