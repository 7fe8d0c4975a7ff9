package lake

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/storage"
)

// TestIdentityEpoch: every commit advances the identity file's epoch to
// the lake's revision, a lost revision is refused at open, Check reports
// the DuckLake snapshots and an epoch key that disagrees with the
// revision.
func TestIdentityEpoch(t *testing.T) {
	dir := t.TempDir()
	srv, addr := serveLake(t, Config{Dir: dir})
	c := dialWire(t, addr, "lake")
	for _, sql := range []string{
		`BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ;INSERT INTO "public".ducklake_snapshot VALUES (1, NOW(), 1, 1, 0);COMMIT`,
		`INSERT INTO "public".ducklake_snapshot VALUES (2, NOW(), 1, 1, 0)`,
		`SELECT 1`, // commits nothing
	} {
		if _, code := simple(t, c, sql); code != "" {
			t.Fatalf("%s: %s", sql, code)
		}
	}
	c.close()
	if got := srv.Store().Rev(); got != 3 {
		t.Fatalf("revision %d after the bootstrap and two commits, want 3", got)
	}
	srv.Close()

	open := func() (*storage.DB, error) {
		return storage.Open(storage.Options{Dir: dir, Logger: quietLog(), EpochKey: EpochKey()})
	}
	db, err := open()
	if err != nil {
		t.Fatal(err)
	}
	if got := db.Identity().Claim.Epoch; got != 3 {
		t.Errorf("the identity file records epoch %d, want the revision 3", got)
	}
	rep, err := Check(db)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 0 || rep.Revision != 3 || rep.Snapshots != 3 || rep.LatestSnapshot != 2 {
		t.Errorf("report %+v, want revision 3, snapshots 0..2", rep)
	}
	// An epoch key behind the revision is a problem Check names.
	if err := db.Set(EpochKey(), binary.BigEndian.AppendUint64(nil, 2)); err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(); err != nil {
		t.Fatal(err)
	}
	if rep, err = Check(db); err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "not the revision 3") {
		t.Errorf("problems %q, want the epoch key's", rep.Problems)
	}
	db.Close()
	// The identity file still claims epoch 3: a store that holds less is
	// refused, as a lost commit would be.
	if db, err = open(); err == nil {
		db.Close()
		t.Fatal("open of a lake whose epoch went back succeeded")
	} else if !strings.Contains(err.Error(), "lost acknowledged commits") {
		t.Fatalf("open: %v", err)
	}
}

// TestCheckSchemas: a user schema and its table survive reopening, and
// Check names a table whose schema entry is gone.
func TestCheckSchemas(t *testing.T) {
	dir := t.TempDir()
	srv, addr := serveLake(t, Config{Dir: dir, Durability: storage.Relaxed, NoBootstrap: true})
	c := dialWire(t, addr, "lake")
	for _, sql := range []string{`CREATE SCHEMA lakemeta`, `CREATE TABLE "lakemeta"."ducklake_metadata"("key" VARCHAR NOT NULL, "value" VARCHAR NOT NULL)`} {
		if _, code := simple(t, c, sql); code != "" {
			t.Fatalf("%s: %s", sql, code)
		}
	}
	c.close()
	srv.Close()
	db, err := storage.Open(storage.Options{Dir: dir, Logger: quietLog(), EpochKey: EpochKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if rep, err := Check(db); err != nil || len(rep.Problems) != 0 || rep.Tables != 1 {
		t.Fatalf("healthy lake: %+v, %v", rep, err)
	}
	if err := db.Delete(schemaKey("lakemeta")); err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(db)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], `schema "lakemeta", which does not exist`) {
		t.Fatalf("problems %q", rep.Problems)
	}
}

// TestBootstrapMetadataSchema: with MetadataSchema the bootstrap creates
// the schema and puts the whole catalog in it, as DuckDB's METADATA_SCHEMA
// option expects; public stays empty.
func TestBootstrapMetadataSchema(t *testing.T) {
	srv, addr := serveLake(t, Config{Dir: t.TempDir(), Durability: storage.Relaxed, MetadataSchema: "LakeMeta"})
	defer srv.Close()
	c := dialWire(t, addr, "lake")
	defer c.close()
	rows, code := simple(t, c, `SELECT oid, nspname FROM pg_namespace ORDER BY oid`)
	if code != "" || len(rows) != 5 || rows[4][1] != "LakeMeta" {
		t.Fatalf("pg_namespace: %v %s", rows, code)
	}
	rows, code = simple(t, c, `SELECT "key", "value" FROM "LakeMeta"."ducklake_metadata" WHERE "key" = 'version'`)
	if code != "" || fmt.Sprint(rows) != "[[version 1.0]]" {
		t.Fatalf("version row: %v %s", rows, code)
	}
	if _, code := simple(t, c, `SELECT "key" FROM "public"."ducklake_metadata"`); code != codeUndefinedTable {
		t.Errorf("public.ducklake_metadata: %q, want 42P01", code)
	}
	// Unquoted, the name folds to lower case: another schema.
	if _, code := simple(t, c, `SELECT "key" FROM LakeMeta."ducklake_metadata"`); code != codeUndefinedTable {
		t.Errorf("lakemeta.ducklake_metadata: %q, want 42P01", code)
	}
	tables := 0
	for _, tb := range srv.Store().liveTables() {
		if tb.Schema != "LakeMeta" {
			t.Errorf("table %s.%s outside the metadata schema", tb.Schema, tb.Name)
		}
		tables++
	}
	if tables != 28 {
		t.Errorf("%d catalog tables, want 28", tables)
	}
	if _, err := Open(Config{Dir: t.TempDir(), MetadataSchema: "pg_lake", Logger: quietLog()}); err == nil || !strings.Contains(err.Error(), "unacceptable schema name") {
		t.Errorf("metadata schema pg_lake: %v", err)
	}
}
