package session

import (
	"strings"
	"testing"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
)

func TestSettingsInBlocks(t *testing.T) {
	var s Settings
	if got := s.Get("timezone"); got != "UTC" {
		t.Fatalf("default timezone = %q", got)
	}
	if err := s.Set("application_name", "before"); err != nil {
		t.Fatal(err)
	}

	// A block that rolls back undoes its SET and its SET LOCAL.
	s.BlockChange()
	s.Put("application_name", "in block")
	s.ChangedInBlock("application_name", false)
	s.BlockChange()
	s.Put("extra_float_digits", "3")
	s.ChangedInBlock("extra_float_digits", true)
	s.EndBlock(false)
	if got := s.Get("application_name"); got != "before" {
		t.Errorf("after rollback application_name = %q", got)
	}
	if _, ok := s.Lookup("extra_float_digits"); ok {
		t.Error("after rollback extra_float_digits is still set")
	}

	// A block that commits keeps its SET and undoes its SET LOCAL.
	s.BlockChange()
	s.Put("application_name", "committed")
	s.ChangedInBlock("application_name", false)
	s.Put("extra_float_digits", "3")
	s.ChangedInBlock("extra_float_digits", true)
	s.EndBlock(true)
	if got := s.Get("application_name"); got != "committed" {
		t.Errorf("after commit application_name = %q", got)
	}
	if got := s.Get("extra_float_digits"); got != "1" {
		t.Errorf("after commit SET LOCAL extra_float_digits = %q, want the default", got)
	}

	// Going back to a mark restores the values and which were SET LOCAL.
	s.BlockChange()
	m := s.Mark()
	s.Put("application_name", "after mark")
	s.ChangedInBlock("application_name", true)
	s.Restore(m)
	if got := s.Get("application_name"); got != "committed" {
		t.Errorf("after Restore application_name = %q", got)
	}
	s.EndBlock(true)
	if got := s.Get("application_name"); got != "committed" {
		t.Errorf("a SET LOCAL undone by Restore still ended the block: %q", got)
	}

	s.ResetAll()
	if got := s.Get("application_name"); got != "" {
		t.Errorf("after ResetAll application_name = %q", got)
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, value, state, msg string
	}{
		{"TimeZone", "UTC", "", ""},
		{"timezone", "Europe/Paris", "", ""},
		{"TimeZone", "+02", "", ""},
		{"timezone", "Mars/Base", "22023", `invalid value for parameter "TimeZone": "Mars/Base"`},
		{"timezone", "Z", "22023", `invalid value for parameter "TimeZone": "Z"`},
		{"statement_timeout", "5 s", "", ""},
		{"statement_timeout", "5 parsecs", "22023", `invalid value for parameter "statement_timeout": "5 parsecs"`},
		{"statement_timeout", "3000000000", "22023", `3000000000 ms is outside the valid range for parameter "statement_timeout" (0 .. 2147483647)`},
		{"work_mem", "64MB", "", ""},
		{"work_mem", "4096", "", ""},
		{"work_mem", "1.5 GB", "", ""},
		{"work_mem", "4 parsecs", "22023", `invalid value for parameter "work_mem": "4 parsecs"`},
		{"work_mem", "4mb", "22023", `invalid value for parameter "work_mem": "4mb"`},
		{"work_mem", "10", "22023", `10 kB is outside the valid range for parameter "work_mem" (64 .. 2147483647)`},
		{"temp_file_limit", "-1", "", ""},
		{"temp_file_limit", "10GB", "", ""},
		{"temp_file_limit", "0", "", ""},
		{"temp_file_limit", "-5", "22023", `-5 kB is outside the valid range for parameter "temp_file_limit" (-1 .. 2147483647)`},
		{"temp_file_limit", "1 parsec", "22023", `invalid value for parameter "temp_file_limit": "1 parsec"`},
		{"rockstream.max_recursion_iterations", "0", "22023", "an integer from 1 to 100000000 is required"},
		{"no_such_setting", "1", "42704", `unrecognized configuration parameter "no_such_setting"`},
	} {
		err := Check(tc.name, tc.value)
		if tc.state == "" {
			if err != nil {
				t.Errorf("Check(%s, %q): %v", tc.name, tc.value, err)
			}
			continue
		}
		if err == nil || errs.SQLState(err) != tc.state || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Check(%s, %q) = %v (%s), want %s %q", tc.name, tc.value, err, errs.SQLState(err), tc.state, tc.msg)
		}
	}
}

func TestWorkMemBytes(t *testing.T) {
	for v, want := range map[string]int64{"4MB": 4 << 20, "4096": 4 << 20, "64 kB": 64 << 10, "1GB": 1 << 30,
		"1.5MB": 1536 << 10, "2048B": 2048, "nonsense": 4 << 20} {
		if got := WorkMemBytes(v); got != want {
			t.Errorf("WorkMemBytes(%q) = %d, want %d", v, got, want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for v, want := range map[string]time.Duration{"0": 0, "250": 250 * time.Millisecond, "1.5s": 1500 * time.Millisecond,
		"2 min": 2 * time.Minute, "1d": 24 * time.Hour, "1500us": 2 * time.Millisecond} {
		got, err := ParseDuration(v)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"", "s", "-1", "1 fortnight"} {
		if _, err := ParseDuration(v); err == nil {
			t.Errorf("ParseDuration(%q) accepted", v)
		}
	}
}

func TestParseBool(t *testing.T) {
	for v, want := range map[string]bool{"on": true, "OFF": false, "t": true, "fal": false, "yes": true, "n": false, "1": true, "0": false} {
		if got, ok := ParseBool(v); !ok || got != want {
			t.Errorf("ParseBool(%q) = %v, %v", v, got, ok)
		}
	}
	for _, v := range []string{"", "o", "maybe", "2"} {
		if _, ok := ParseBool(v); ok {
			t.Errorf("ParseBool(%q) accepted", v)
		}
	}
}

type testCursor struct{ closed *int }

func (c testCursor) Close() { *c.closed++ }

func TestCursors(t *testing.T) {
	var cs Cursors[testCursor]
	closed := 0
	decl := func(name string, opts int32) *pg.DeclareCursorStmt {
		return &pg.DeclareCursorStmt{Portalname: name, Options: opts}
	}
	if err := cs.CheckDeclare(decl("c", 0), false); errs.SQLState(err) != "25P01" {
		t.Errorf("DECLARE outside a block: %v", err)
	}
	if err := cs.CheckDeclare(decl("c", cursorHold), true); errs.SQLState(err) != "0A000" {
		t.Errorf("DECLARE WITH HOLD: %v", err)
	}
	if err := cs.CheckDeclare(decl("c", 0), true); err != nil {
		t.Fatal(err)
	}
	cs.Add("c", testCursor{&closed})
	if err := cs.CheckDeclare(decl("c", 0), true); errs.SQLState(err) != "42P03" {
		t.Errorf("a second DECLARE c: %v", err)
	}
	mark := cs.Names()
	cs.Add("d", testCursor{&closed})
	cs.CloseExcept(mark)
	if _, ok := cs.Lookup("d"); ok || closed != 1 {
		t.Errorf("CloseExcept left d open (closed %d)", closed)
	}
	if err := cs.Close("d"); errs.SQLState(err) != "34000" {
		t.Errorf("closing a closed cursor: %v", err)
	}
	cs.CloseAll()
	if _, err := cs.Get("c"); errs.SQLState(err) != "34000" || closed != 2 {
		t.Errorf("after CloseAll: %v (closed %d)", err, closed)
	}
}

func TestPrepared(t *testing.T) {
	var ps Prepared[string]
	if err := ps.CheckNew("q"); err != nil {
		t.Fatal(err)
	}
	ps.Add("q", "SELECT 1")
	if err := ps.CheckNew("q"); errs.SQLState(err) != "42P05" {
		t.Errorf("preparing q twice: %v", err)
	}
	if p, err := ps.Get("q"); err != nil || p != "SELECT 1" {
		t.Errorf("Get(q) = %q, %v", p, err)
	}
	if err := ps.Remove("q"); err != nil {
		t.Fatal(err)
	}
	if err := ps.Remove("q"); errs.SQLState(err) != "26000" {
		t.Errorf("removing q twice: %v", err)
	}
	ps.Add("r", "SELECT 2")
	ps.RemoveAll()
	if _, err := ps.Get("r"); errs.SQLState(err) != "26000" {
		t.Errorf("after RemoveAll: %v", err)
	}
}

func TestTxnAccessMode(t *testing.T) {
	tx := NewTxn(true, true)
	if !tx.ReadOnly() || !tx.Explicit() {
		t.Fatal("a read-only block is not read-only and explicit")
	}
	if err := tx.SetAccessReadOnly(false, true); errs.SQLState(err) != "25001" {
		t.Errorf("read-write inside a savepoint: %v", err)
	}
	if err := tx.SetAccessReadOnly(false, false); err != nil || tx.ReadOnly() {
		t.Errorf("read-write before a query: %v, read-only %v", err, tx.ReadOnly())
	}
	tx = NewTxn(true, true)
	tx.Queried()
	if err := tx.SetAccessReadOnly(false, false); errs.SQLState(err) != "25001" || !tx.AccessReadOnly() {
		t.Errorf("read-write after a query: %v", err)
	}
	if err := tx.SetAccessReadOnly(true, true); err != nil {
		t.Errorf("read-only is always allowed: %v", err)
	}

	tx = NewTxn(true, false)
	tx.Subscribed()
	if !tx.ReadOnly() || tx.AccessReadOnly() {
		t.Error("a block with a SUBSCRIBE cursor may write, or shows as read-only")
	}
}

func TestTxnStates(t *testing.T) {
	tx := NewImplicitBlock(false)
	if !tx.Block() || !tx.Implicit() || tx.Explicit() {
		t.Fatal("an implicit block is not an implicit block")
	}
	tx.BeginExplicit()
	if !tx.Explicit() {
		t.Error("BEGIN in a message does not make its block explicit")
	}
	tx.Fail()
	if !tx.Failed() {
		t.Error("Fail does not fail")
	}
	tx.Recover()
	if tx.Failed() {
		t.Error("Recover does not end the failed state")
	}
	if auto := NewTxn(false, false); auto.Block() || auto.Explicit() {
		t.Error("an autocommit transaction is a block")
	}
}

func TestSavepointsFind(t *testing.T) {
	sps := Savepoints[int]{{Name: "a", Layer: 1}, {Name: "b", Layer: 2}, {Name: "a", Layer: 3}}
	if i, err := sps.Find("a"); err != nil || sps[i].Layer != 3 {
		t.Errorf("Find(a) = %d, %v; want the latest a", i, err)
	}
	if i, err := sps.Find("b"); err != nil || i != 1 {
		t.Errorf("Find(b) = %d, %v", i, err)
	}
	if _, err := sps.Find("c"); errs.SQLState(err) != "3B001" || !strings.Contains(err.Error(), `savepoint "c" does not exist`) {
		t.Errorf("Find(c): %v", err)
	}
}

// TestSettingsVersion checks that every change of a value moves the
// version and that reads do not: what is derived from the settings is
// kept by version.
func TestSettingsVersion(t *testing.T) {
	var s Settings
	moved := func(what string, change func()) {
		t.Helper()
		v := s.Version()
		change()
		if s.Version() == v {
			t.Errorf("%s left the version at %d", what, v)
		}
	}
	still := func(what string, read func()) {
		t.Helper()
		v := s.Version()
		read()
		if s.Version() != v {
			t.Errorf("%s moved the version", what)
		}
	}
	moved("Put", func() { s.Put("timezone", "Europe/Paris") })
	moved("Set", func() {
		if err := s.Set("work_mem", "8MB"); err != nil {
			t.Fatal(err)
		}
	})
	still("Get and Lookup", func() { s.Get("timezone"); s.Lookup("work_mem") })
	moved("Reset", func() { s.Reset("work_mem") })
	moved("ResetAll", func() { s.ResetAll() })

	s.BlockChange()
	moved("a SET in a block", func() { s.Put("timezone", "Asia/Tokyo") })
	s.ChangedInBlock("timezone", false)
	moved("a rollback of a block that changed a value", func() { s.EndBlock(false) })
	if got := s.Get("timezone"); got != "UTC" {
		t.Fatalf("after rollback timezone = %q", got)
	}
	s.BlockChange()
	s.Put("timezone", "Asia/Tokyo")
	s.ChangedInBlock("timezone", true)
	moved("the commit of a block with SET LOCAL", func() { s.EndBlock(true) })
	still("the end of a block that changed nothing", func() { s.EndBlock(true) })

	s.BlockChange()
	m := s.Mark()
	s.Put("timezone", "Asia/Tokyo")
	moved("Restore", func() { s.Restore(m) })
}
