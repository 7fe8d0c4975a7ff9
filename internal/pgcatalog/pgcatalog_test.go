package pgcatalog

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/types"
)

// testSource is a catalog described as plain data.
type testSource struct {
	rels     []Relation
	roles    []Role
	comments map[uint64]Comments
}

func (s testSource) Comments(id uint64) (Comments, error) { return s.comments[id], nil }

func (s testSource) Relations() []Relation { return s.rels }
func (s testSource) Roles() []Role         { return s.roles }
func (testSource) Settings() []Setting {
	return []Setting{{Name: "timezone", Default: "UTC", Description: "Sets the time zone."},
		{Name: "application_name", Default: "", Description: "Sets the application name."}}
}

func ordersSource() testSource {
	return testSource{
		rels: []Relation{
			{ID: 1, Name: "orders", Kind: sql.Table,
				Cols:    []plan.Column{{Name: "id", Type: types.Of(types.Int8)}, {Name: "note", Type: types.Of(types.Text)}},
				NotNull: []bool{false, false}, Defaults: []plan.Expr{nil, &plan.Const{Val: types.MakeText("none"), Typ: types.Of(types.Text)}},
				PK: []int{0}, Options: []string{"append_only=true"}},
			{ID: 2, Name: "big", Kind: sql.View, SQLText: "SELECT id FROM orders WHERE id > 10",
				Cols: []plan.Column{{Name: "id", Type: types.Of(types.Int8)}}},
		},
		roles:    []Role{{Name: "alice", CanLogin: true}},
		comments: map[uint64]Comments{1: {Relation: "every order", Columns: map[int]string{2: "free text"}}},
	}
}

// rowsOf reads a system relation, each row's columns cols formatted and
// joined by |.
func rowsOf(t *testing.T, c *Catalog, rel string, cols ...string) []string {
	t.Helper()
	tab := c.Table(rel)
	if tab == nil {
		t.Fatalf("no system relation %s", rel)
	}
	rows, err := tab.Rows()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		var vals []string
		for _, name := range cols {
			i := columnIndex(t, tab.Cols, name)
			if r[i].IsNull() {
				vals = append(vals, "NULL")
			} else {
				vals = append(vals, types.Format(r[i], tab.Cols[i].Type))
			}
		}
		out = append(out, strings.Join(vals, "|"))
	}
	return out
}

func columnIndex(t *testing.T, cols []plan.Column, name string) int {
	t.Helper()
	for i, c := range cols {
		if c.Name == name {
			return i
		}
	}
	t.Fatalf("no column %s", name)
	return -1
}

func contains(rows []string, want string) bool {
	for _, r := range rows {
		if r == want {
			return true
		}
	}
	return false
}

func TestUserRelations(t *testing.T) {
	c := New(ordersSource(), nil)
	class := rowsOf(t, c, "pg_class", "oid", "relname", "relkind", "relnatts", "reloptions")
	for _, want := range []string{
		"20480|orders|r|2|{append_only=true}", // userOID(1)
		"20481|orders_pkey|i|1|NULL",          // the primary key's index
		"24576|big|v|1|NULL",
	} {
		if !contains(class, want) {
			t.Errorf("pg_class has no row %s", want)
		}
	}
	attr := rowsOf(t, c, "pg_catalog.pg_attribute", "attrelid", "attname", "attnotnull", "atthasdef")
	for _, want := range []string{"20480|id|t|f", "20480|note|f|t", "20481|id|t|f"} {
		if !contains(attr, want) {
			t.Errorf("pg_attribute has no row %s", want)
		}
	}
	if got := rowsOf(t, c, "pg_attrdef", "adrelid", "adnum", "adbin"); len(got) != 1 || got[0] != "20480|2|'none'::text" {
		t.Errorf("pg_attrdef = %q", got)
	}
	if got := rowsOf(t, c, "pg_views", "viewname", "definition"); len(got) != 1 || got[0] != "big|SELECT id FROM orders WHERE id > 10" {
		t.Errorf("pg_views = %q", got)
	}
	if got := rowsOf(t, c, "information_schema.table_constraints", "table_name", "constraint_name", "constraint_type"); len(got) != 1 || got[0] != "orders|orders_pkey|PRIMARY KEY" {
		t.Errorf("table_constraints = %q", got)
	}
	if c.Table("information_schema.nosuch") != nil || c.Table("tables") != nil {
		t.Error("an unknown or unqualified information_schema name found a relation")
	}
}

func TestRolesAndSettings(t *testing.T) {
	s := &Session{User: "bob", Database: "shop", Setting: func(n string) string {
		if n == "timezone" {
			return "Etc/UTC"
		}
		return ""
	}}
	c := New(ordersSource(), s)
	roles := rowsOf(t, c, "pg_roles", "rolname", "rolsuper", "rolcanlogin")
	want := []string{"rockstream|t|t", "pg_database_owner|f|f", "alice|f|t", "bob|t|t"}
	if strings.Join(roles, ",") != strings.Join(want, ",") {
		t.Errorf("pg_roles = %q, want %q", roles, want)
	}
	if got := rowsOf(t, c, "pg_settings", "name", "setting", "boot_val"); strings.Join(got, ",") != "application_name||,timezone|Etc/UTC|UTC" {
		t.Errorf("pg_settings = %q", got)
	}
	if got := rowsOf(t, c, "pg_database", "datname"); len(got) != 1 || got[0] != "shop" {
		t.Errorf("pg_database = %q", got)
	}
	eval := func(name string, args ...types.Value) types.Value {
		t.Helper()
		fs := c.SystemFunction(name)
		for _, f := range fs {
			if len(f.Args) == len(args) {
				v, err := f.Eval(args)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return v
			}
		}
		t.Fatalf("no overload of %s with %d arguments", name, len(args))
		return types.Null
	}
	if v := eval("current_setting", types.MakeText("TimeZone")); v.Str() != "Etc/UTC" {
		t.Errorf("current_setting(TimeZone) = %v", v)
	}
	if v := eval("current_user"); v.Str() != "bob" {
		t.Errorf("current_user = %v", v)
	}
	if v := eval("pg_get_indexdef", types.MakeOID(userOID(1)+pkIndexOffset)); v.Str() != "CREATE UNIQUE INDEX orders_pkey ON public.orders USING btree (id)" {
		t.Errorf("pg_get_indexdef = %v", v)
	}
	if fs := New(ordersSource(), nil).SystemFunction("version"); fs != nil {
		t.Error("a catalog outside a session answers system functions")
	}
}

func TestRegNames(t *testing.T) {
	c := New(ordersSource(), &Session{Setting: func(string) string { return "" }})
	for _, tc := range []struct {
		id      types.TypeID
		name    string
		oid     uint32
		display string
	}{
		{types.RegClass, "orders", userOID(1), "orders"},
		{types.RegClass, "public.orders_pkey", userOID(1) + pkIndexOffset, "orders_pkey"},
		{types.RegClass, "pg_class", 1259, "pg_class"},
		{types.RegClass, "information_schema.tables", 13425, "information_schema.tables"},
		{types.RegType, "character varying(10)", 1043, "character varying"},
		{types.RegNamespace, "public", publicNamespace, "public"},
		{types.RegRole, "alice", roleOID("alice"), "alice"},
	} {
		oid, display, err := c.RegLookup(tc.id, tc.name)
		if err != nil || oid != tc.oid || display != tc.display {
			t.Errorf("RegLookup(%s, %q) = %d, %q, %v; want %d, %q", tc.id, tc.name, oid, display, err, tc.oid, tc.display)
			continue
		}
		if back, ok := c.RegName(tc.id, oid); !ok || back != tc.display {
			t.Errorf("RegName(%s, %d) = %q, %v; want %q", tc.id, oid, back, ok, tc.display)
		}
	}
	if _, _, err := c.RegLookup(types.RegClass, "nosuch"); err == nil || !strings.Contains(err.Error(), `relation "nosuch" does not exist`) {
		t.Errorf("RegLookup of a missing relation: %v", err)
	}
}

func TestSizePretty(t *testing.T) {
	// PostgreSQL 15's answers.
	for n, want := range map[int64]string{0: "0 bytes", 10239: "10239 bytes", 10240: "10 kB", 10485247: "10239 kB",
		10485248: "10 MB", -10240: "-10 kB", 1 << 50: "1024 TB"} {
		if got := sizePretty(n); got != want {
			t.Errorf("sizePretty(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestComments: pg_description lists the Source's comments of user
// relations and their columns and schema public's description, and obj_description and col_description
// return them (NULL where there is none).
func TestComments(t *testing.T) {
	c := New(ordersSource(), &Session{User: "bob", Database: "shop", Setting: func(string) string { return "" }})
	got := rowsOf(t, c, "pg_catalog.pg_description", "objoid", "classoid", "objsubid", "description")
	if strings.Join(got, ",") != "20480|1259|0|every order,20480|1259|2|free text,2200|2615|0|standard public schema" {
		t.Errorf("pg_description = %q", got)
	}
	call := func(name string, args ...types.Value) string {
		t.Helper()
		for _, f := range c.SystemFunction(name) {
			if len(f.Args) != len(args) {
				continue
			}
			v, err := f.Eval(args)
			if err != nil {
				t.Fatal(err)
			}
			if v.IsNull() {
				return "NULL"
			}
			return v.Str()
		}
		t.Fatalf("no %s of %d arguments", name, len(args))
		return ""
	}
	orders, big := types.MakeOID(20480), types.MakeOID(24576)
	for _, tc := range []struct{ got, want string }{
		{call("obj_description", orders, types.MakeText("pg_class")), "every order"},
		{call("obj_description", orders), "every order"},
		{call("obj_description", big, types.MakeText("pg_class")), "NULL"},
		{call("col_description", orders, types.MakeInt(types.Int4, 2)), "free text"},
		{call("col_description", orders, types.MakeInt(types.Int4, 1)), "NULL"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
