package lake

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/storage"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// serveLake opens a lake in dir and serves it on a loopback port.
func serveLake(t testing.TB, cfg Config) (*Server, string) {
	t.Helper()
	cfg.Logger = quietLog()
	srv, err := Open(cfg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	return srv, ln.Addr().String()
}

// simple sends one Query and returns the rows (text) and the error
// SQLSTATE, if any.
func simple(t testing.TB, c *wireClient, sql string) (rows [][]string, code string) {
	t.Helper()
	c.fe.Send(&pgproto3.Query{String: sql})
	msgs, err := c.until(t)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	for _, m := range msgs {
		switch m := m.(type) {
		case *pgproto3.DataRow:
			var r []string
			for _, v := range m.Values {
				r = append(r, string(v))
			}
			rows = append(rows, r)
		case *pgproto3.ErrorResponse:
			code = m.Code
		}
	}
	return rows, code
}

// corrupt flips one payload byte of the first stored key with prefix.
func corrupt(t *testing.T, dir string, prefix []byte) {
	t.Helper()
	db, err := storage.Open(storage.Options{Dir: dir, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	var key, val []byte
	if err := db.Scan(prefix, prefixEnd(prefix), func(k, v []byte) bool {
		key, val = append([]byte(nil), k...), append([]byte(nil), v...)
		return false
	}); err != nil {
		t.Fatal(err)
	}
	if key == nil {
		t.Fatalf("no key with prefix %x", prefix)
	}
	val[len(val)-1] ^= 0x55
	if err := db.Set(key, val); err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptRowFailsClosed: a damaged row record is an XX001 error for
// the scan that meets it, never data; other tables stay readable.
func TestCorruptRowFailsClosed(t *testing.T) {
	dir := t.TempDir()
	srv, addr := serveLake(t, Config{Dir: dir, Durability: storage.Relaxed})
	c := dialWire(t, addr, "lake")
	if _, code := simple(t, c, `INSERT INTO "public".ducklake_table_stats VALUES (1, 2, 3, 4)`); code != "" {
		t.Fatalf("insert: %s", code)
	}
	c.close()
	oid := srv.Store().lookup("public", "ducklake_table_stats").OID
	srv.Close()

	corrupt(t, dir, rowPrefix(oid))
	srv, addr = serveLake(t, Config{Dir: dir, Durability: storage.Relaxed})
	defer srv.Close()
	c = dialWire(t, addr, "lake")
	defer c.close()
	rows, code := simple(t, c, `SELECT "table_id", "record_count" FROM "public"."ducklake_table_stats"`)
	if code != codeDataCorrupted || len(rows) != 0 {
		t.Fatalf("scan of a damaged row: rows %v, code %q; want XX001 and no rows", rows, code)
	}
	if rows, code := simple(t, c, `SELECT "key" FROM "public"."ducklake_metadata" WHERE "key" = 'version'`); code != "" || len(rows) != 1 {
		t.Fatalf("other table: rows %v, code %q", rows, code)
	}
}

// TestCorruptCatalogFailsOpen: a damaged table definition or revision
// record stops Open with ErrCorrupted.
func TestCorruptCatalogFailsOpen(t *testing.T) {
	for _, prefix := range [][]byte{{nsTable}, metaKey("rev")} {
		dir := t.TempDir()
		srv, err := Open(Config{Dir: dir, Durability: storage.Relaxed, Logger: quietLog()})
		if err != nil {
			t.Fatal(err)
		}
		srv.Close()
		corrupt(t, dir, prefix)
		srv, err = Open(Config{Dir: dir, Durability: storage.Relaxed, Logger: quietLog()})
		if err == nil {
			srv.Close()
			t.Fatalf("open with a damaged %q record succeeded", prefix)
		}
		if !errors.Is(err, ErrCorrupted) {
			t.Fatalf("open with a damaged %q record: %v, want ErrCorrupted", prefix, err)
		}
	}
}

// TestBootstrap: a new lake holds the 28 catalog tables and DuckDB's
// initial rows, in revision 1; reopening does not bootstrap again.
func TestBootstrap(t *testing.T) {
	dir := t.TempDir()
	srv, addr := serveLake(t, Config{Dir: dir, DataPath: "s3://b/lake/", Durability: storage.Relaxed})
	if got := len(srv.Store().liveTables()); got != 28 {
		t.Errorf("%d tables, want 28", got)
	}
	if rev := srv.Store().Rev(); rev != 1 {
		t.Errorf("revision %d, want 1", rev)
	}
	c := dialWire(t, addr, "lake")
	rows, _ := simple(t, c, `SELECT "key", "value" FROM "public"."ducklake_metadata"`)
	want := "[[version 1.0] [created_by RockLake] [data_path s3://b/lake/] [encrypted false]]"
	if fmt.Sprint(rows) != want {
		t.Errorf("metadata %v, want %s", rows, want)
	}
	rows, _ = simple(t, c, `SELECT "snapshot_id", "schema_version", "next_catalog_id", "next_file_id" FROM "public"."ducklake_snapshot"`)
	if fmt.Sprint(rows) != "[[0 0 1 0]]" {
		t.Errorf("snapshots %v", rows)
	}
	rows, _ = simple(t, c, `SELECT "schema_id", "schema_name", "path", "path_is_relative" FROM "public"."ducklake_schema"`)
	if fmt.Sprint(rows) != "[[0 main main/ t]]" {
		t.Errorf("schemas %v", rows)
	}
	// The bootstrap's keys are committed, not held: a duplicate fails at
	// once instead of waiting.
	if _, code := simple(t, c, `INSERT INTO "public".ducklake_snapshot VALUES (0, NOW(), 0, 1, 0)`); code != codeUniqueViolation {
		t.Errorf("duplicate snapshot 0: %q, want 23505", code)
	}
	c.close()
	srv.Close()
	srv, _ = serveLake(t, Config{Dir: dir, Durability: storage.Relaxed})
	defer srv.Close()
	if rev := srv.Store().Rev(); rev != 1 {
		t.Errorf("revision %d after reopening, want 1", rev)
	}
}

const crashChildEnv = "ROCKLAKE_CRASH_CHILD_DIR"

// TestCrashDuringCommits kills a RockLake process (SIGKILL) while a
// client commits snapshots, reopens its directory, and checks that every
// acknowledged commit is there and none is there in part. Each commit
// writes a snapshot row and its change row in one batch.
func TestCrashDuringCommits(t *testing.T) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dir := t.TempDir()
	acked := map[int]bool{}
	next := 1
	for round := 0; round < 3; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashDuringCommits$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		addr := ""
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "addr "); ok {
				addr = a
				break
			}
		}
		if addr == "" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("child printed no address")
		}
		go io.Copy(io.Discard, out)
		c := dialWire(t, addr, "lake")
		killAt := time.Now().Add(time.Duration(150+100*round) * time.Millisecond)
		killed := make(chan struct{})
		go func() {
			time.Sleep(time.Until(killAt))
			cmd.Process.Signal(os.Kill)
			close(killed)
		}()
		for {
			c.fe.Send(&pgproto3.Query{String: fmt.Sprintf(
				`INSERT INTO "public".ducklake_snapshot VALUES (%d, NOW(), 1, 1, 0);INSERT INTO "public".ducklake_snapshot_changes VALUES (%d, 'commit %d', NULL, NULL, NULL)`,
				next, next, next)})
			msgs, err := c.until(t)
			if err != nil {
				break // the server is gone
			}
			for _, m := range msgs {
				if e, isErr := m.(*pgproto3.ErrorResponse); isErr {
					t.Fatalf("commit %d: %s %s", next, e.Code, e.Message)
				}
			}
			acked[next] = true
			next++
		}
		<-killed
		cmd.Wait()
		c.nc.Close()

		srv, addr := serveLake(t, Config{Dir: dir})
		c = dialWire(t, addr, "lake")
		snaps, _ := simple(t, c, `SELECT "snapshot_id" FROM "public"."ducklake_snapshot"`)
		changes, _ := simple(t, c, `SELECT "snapshot_id", "changes_made" FROM "public"."ducklake_snapshot_changes"`)
		c.close()
		srv.Close()
		have := map[string]bool{}
		for _, r := range snaps {
			have[r[0]] = true
		}
		haveChange := map[string]bool{}
		for _, r := range changes {
			haveChange[r[0]] = true
		}
		for n := range acked {
			if !have[fmt.Sprint(n)] {
				t.Fatalf("round %d: acknowledged snapshot %d is missing after the crash", round, n)
			}
		}
		for id := range have {
			if !haveChange[id] {
				t.Fatalf("round %d: snapshot %s is there without its change row: a partial commit", round, id)
			}
		}
		if len(have) != len(haveChange) {
			t.Fatalf("round %d: %d snapshots, %d change rows", round, len(have), len(haveChange))
		}
		// The next round goes on after whatever survived.
		next = len(have)
		t.Logf("round %d: %d commits acknowledged in all, %d snapshots present", round, len(acked), len(have))
	}
	if len(acked) < 3 {
		t.Fatalf("only %d commits acknowledged: the test did not exercise commits", len(acked))
	}
}

// crashChild serves a lake with fsynced commits until it is killed.
func crashChild(dir string) {
	srv, err := Open(Config{Dir: dir, Logger: quietLog()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(3)
	}
	fmt.Printf("addr %s\n", ln.Addr())
	srv.Serve(ln)
	os.Exit(0)
}

// TestCheck: the lake checker finds a damaged row and a primary key
// index out of step with the rows, and nothing in a healthy lake.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	srv, addr := serveLake(t, Config{Dir: dir, Durability: storage.Relaxed})
	c := dialWire(t, addr, "lake")
	simple(t, c, `INSERT INTO "public".ducklake_snapshot VALUES (1, NOW(), 1, 1, 0)`)
	simple(t, c, `INSERT INTO "public".ducklake_table_stats VALUES (1, 2, 3, 4)`)
	c.close()
	stats := srv.Store().lookup("public", "ducklake_table_stats").OID
	snaps := srv.Store().lookup("public", "ducklake_snapshot").OID
	srv.Close()

	check := func() *Report {
		db, err := storage.Open(storage.Options{Dir: dir, Logger: quietLog()})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rep, err := Check(db)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := check(); len(rep.Problems) != 0 || rep.Tables != 28 || rep.Revision != 3 {
		t.Fatalf("healthy lake: %+v", rep)
	}
	corrupt(t, dir, rowPrefix(stats))
	db, err := storage.Open(storage.Options{Dir: dir, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	p := binaryPrefixPK(snaps)
	if err := db.DeleteRange(p, prefixEnd(p)); err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	rep := check()
	got := strings.Join(rep.Problems, "\n")
	// The damaged row, its table_id index entry that now names nothing,
	// and the two snapshots without primary key entries.
	if len(rep.Problems) != 4 || !strings.Contains(got, "ducklake_table_stats row (0,1)") ||
		strings.Count(got, "has no primary key entry") != 2 || !strings.Contains(got, "names no row version") {
		t.Fatalf("problems:\n%s", got)
	}
}

func binaryPrefixPK(oid uint32) []byte {
	k, _ := pkKey(oid, nil)
	return k
}

// TestAuth: trust, cleartext password and SCRAM-SHA-256, with a right
// and a wrong password, through pgconn (libpq's protocol).
func TestAuth(t *testing.T) {
	users := map[string]string{"duckdb": "s3cret"}
	for _, method := range []string{AuthPassword, AuthSCRAM} {
		srv, addr := serveLake(t, Config{Dir: t.TempDir(), Durability: storage.Relaxed, Auth: method, Users: users})
		ctx := context.Background()
		conn, err := pgconn.Connect(ctx, "postgres://duckdb:s3cret@"+addr+"/lake?sslmode=disable")
		if err != nil {
			t.Fatalf("%s, right password: %v", method, err)
		}
		if _, err := conn.Exec(ctx, "SELECT 1").ReadAll(); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		conn.Close(ctx)
		for _, bad := range []string{"duckdb:wrong", "nobody:s3cret"} {
			_, err = pgconn.Connect(ctx, "postgres://"+bad+"@"+addr+"/lake?sslmode=disable")
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "28P01" {
				t.Fatalf("%s, %s: %v, want 28P01", method, bad, err)
			}
		}
		srv.Close()
	}
	if _, err := Open(Config{Dir: t.TempDir(), Auth: "md5", Logger: quietLog()}); err == nil {
		t.Fatal("an unknown method was accepted")
	}
}

// TestTLS: a client that asks for TLS gets it, one that does not is
// served in the clear.
func TestTLS(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv, addr := serveLake(t, Config{Dir: t.TempDir(), Durability: storage.Relaxed, TLS: cfg})
	defer srv.Close()
	ctx := context.Background()
	for _, mode := range []string{"require", "disable"} {
		conn, err := pgconn.Connect(ctx, "postgres://duckdb@"+addr+"/lake?sslmode="+mode)
		if err != nil {
			t.Fatalf("sslmode=%s: %v", mode, err)
		}
		_, isTLS := conn.Conn().(*tls.Conn)
		if isTLS != (mode == "require") {
			t.Errorf("sslmode=%s: TLS %v", mode, isTLS)
		}
		if _, err := conn.Exec(ctx, "SELECT 1").ReadAll(); err != nil {
			t.Fatalf("sslmode=%s: %v", mode, err)
		}
		conn.Close(ctx)
	}
}

// countVersions counts the stored row versions and table_id index
// entries of table oid.
func countVersions(t *testing.T, s *Store, oid uint32) (rows, index int) {
	t.Helper()
	p := rowPrefix(oid)
	if err := s.db.Scan(p, prefixEnd(p), func(k, v []byte) bool { rows++; return true }); err != nil {
		t.Fatal(err)
	}
	p = indexPrefix(oid)
	if err := s.db.Scan(p, prefixEnd(p), func(k, v []byte) bool { index++; return true }); err != nil {
		t.Fatal(err)
	}
	return rows, index
}

// TestGarbageCollection: ended versions are removed once no snapshot
// can see them, kept while one can (and it still reads them), and
// dropped tables' data goes too; a restart sweeps what is left.
func TestGarbageCollection(t *testing.T) {
	dir := t.TempDir()
	srv, addr := serveLake(t, Config{Dir: dir, Durability: storage.Relaxed})
	a, b := dialWire(t, addr, "lake"), dialWire(t, addr, "lake")
	must := func(c *wireClient, sql string) [][]string {
		rows, code := simple(t, c, sql)
		if code != "" {
			t.Fatalf("%s: %s", sql, code)
		}
		return rows
	}
	must(a, `INSERT INTO "public".ducklake_table_stats VALUES (1, 0, 0, 0)`)
	stats := srv.Store().lookup("public", "ducklake_table_stats").OID
	for i := 1; i <= 50; i++ {
		must(b, fmt.Sprintf(`UPDATE "public".ducklake_table_stats SET record_count=%d WHERE table_id=1`, i))
	}
	if rows, index := countVersions(t, srv.Store(), stats); rows > 2 || index > 2 {
		t.Fatalf("after 50 updates with no snapshot open: %d row versions, %d index entries", rows, index)
	}

	// A reader's snapshot keeps the versions it can see.
	must(a, `BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ`)
	if got := must(a, `SELECT "record_count" FROM "public"."ducklake_table_stats" WHERE "table_id" = '1'`); fmt.Sprint(got) != "[[50]]" {
		t.Fatalf("reader sees %v", got)
	}
	for i := 51; i <= 60; i++ {
		must(b, fmt.Sprintf(`UPDATE "public".ducklake_table_stats SET record_count=%d WHERE table_id=1`, i))
	}
	if rows, _ := countVersions(t, srv.Store(), stats); rows < 10 {
		t.Fatalf("with a snapshot open: only %d row versions kept", rows)
	}
	if got := must(a, `SELECT "record_count" FROM "public"."ducklake_table_stats" WHERE "table_id" = '1'`); fmt.Sprint(got) != "[[50]]" {
		t.Fatalf("reader sees %v after the updates", got)
	}
	must(a, `COMMIT`)
	must(b, `UPDATE "public".ducklake_table_stats SET record_count=61 WHERE table_id=1`)
	if rows, index := countVersions(t, srv.Store(), stats); rows > 2 || index > 2 {
		t.Fatalf("after the reader ended: %d row versions, %d index entries", rows, index)
	}

	// A dropped table's rows go once no snapshot can see the table.
	must(a, `CREATE TABLE IF NOT EXISTS "public".ducklake_inlined_data_1_1(row_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, a INTEGER)`)
	must(a, `INSERT INTO "public".ducklake_inlined_data_1_1 VALUES (0, 1, NULL, 1), (1, 1, NULL, 2)`)
	inlined := srv.Store().lookup("public", "ducklake_inlined_data_1_1").OID
	must(a, `DROP TABLE IF EXISTS "public"."ducklake_inlined_data_1_1"`)
	must(b, `UPDATE "public".ducklake_table_stats SET record_count=62 WHERE table_id=1`)
	if rows, _ := countVersions(t, srv.Store(), inlined); rows != 0 {
		t.Fatalf("dropped table: %d row versions left", rows)
	}

	// Versions left when the server stops are swept when it opens.
	must(a, `BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ`)
	must(a, `SELECT "record_count" FROM "public"."ducklake_table_stats"`)
	for i := 0; i < 5; i++ {
		must(b, fmt.Sprintf(`UPDATE "public".ducklake_table_stats SET record_count=%d WHERE table_id=1`, 100+i))
	}
	a.close()
	b.close()
	srv.Close()
	srv, addr = serveLake(t, Config{Dir: dir, Durability: storage.Relaxed})
	defer srv.Close()
	if rows, index := countVersions(t, srv.Store(), stats); rows != 1 || index != 1 {
		t.Fatalf("after reopening: %d row versions, %d index entries, want 1 and 1", rows, index)
	}
	c := dialWire(t, addr, "lake")
	defer c.close()
	if got := must(c, `SELECT "record_count" FROM "public"."ducklake_table_stats" WHERE "table_id" = '1'`); fmt.Sprint(got) != "[[104]]" {
		t.Fatalf("after reopening: %v", got)
	}
	db := srv.Store().DB()
	rep, err := Check(db)
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("check after collection: %v %v", err, rep)
	}
}
