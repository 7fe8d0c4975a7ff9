package privilege

import (
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestScripts runs the scripts in testdata: each sets up roles and an
// object and shows, step by step, what GRANT, REVOKE and the role
// statements do and what each role may then do. The expected output
// was checked against PostgreSQL 15 running the same statements (the
// runtime's privilege oracle test does that for the statements it
// covers). Commands:
//
//	role NAME [super] [noinherit] [createrole]
//	member ROLE MEMBER [admin]          -- GRANT ROLE TO MEMBER, unchecked
//	object table|schema|database NAME OWNER
//	grant|revoke AS PRIVS|all TO|FROM GRANTEES [option] [cascade]
//	check ROLE PRIVS                    -- has ... privilege
//	create-role AS [super] | alter-role AS TARGET [super] [password] [other]
//	drop-role AS SESSION TARGET | grant-role AS ROLE MEMBER [admin]
//	revoke-role AS ROLE MEMBER [admin] | set-role SESSION ROLE
//	default AS FOR grant|revoke PRIVS GRANTEES [option]
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var roles []Role
		var members []Membership
		var obj Object
		var defaults ACL
		graph := func() *Graph { return NewGraph(roles, members) }
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			f := strings.Fields(d.Input)
			has := func(w string) bool {
				for _, x := range f {
					if x == w {
						return true
					}
				}
				return false
			}
			switch d.Cmd {
			case "role":
				r := Role{Name: f[0], Superuser: has("super"), Inherit: !has("noinherit"), CreateRole: has("createrole"), Login: true}
				roles = append(roles, r)
				return "ok"
			case "member":
				members = append(members, Membership{Role: f[0], Member: f[1], Grantor: "postgres", Admin: has("admin")})
				return "ok"
			case "object":
				kinds := map[string]Kind{"table": Relation, "schema": Schema, "database": Database}
				obj = Object{Kind: kinds[f[0]], KindName: f[0], Name: f[1], Owner: f[2]}
				return showACL(obj.ACL, obj)
			case "grant", "revoke":
				ch := Change{Revoke: d.Cmd == "revoke", GrantOption: has("option"), Cascade: has("cascade")}
				ch.Privs, ch.AllPrivs = parsePrivs(f[1], obj.Kind)
				ch.Grantees = parseGrantees(f[3])
				acl, warns, err := graph().Apply(obj, f[0], ch)
				if err != nil {
					return showErr(err)
				}
				obj.ACL = acl
				var b strings.Builder
				for _, w := range warns {
					fmt.Fprintf(&b, "WARNING %s %s\n", w.SQLState, w.Message)
				}
				return b.String() + showACL(acl, obj)
			case "check":
				want, _ := parsePrivs(f[1], obj.Kind)
				p, o := graph().Privileges(obj, f[0])
				if err := graph().Check(obj, f[0], want); err != nil {
					return fmt.Sprintf("%s (holds %q, grant options %q)", showErr(err), p.String(), o.String())
				}
				return fmt.Sprintf("allowed (holds %q, grant options %q)", p.String(), o.String())
			case "create-role":
				return showErr(graph().CheckCreateRole(f[0], has("super")))
			case "alter-role":
				target, _ := graph().Role(f[1])
				return showErr(graph().CheckAlterRole(f[0], target, AlterRole{Superuser: has("super"), Password: has("password"), Other: has("other")}))
			case "drop-role":
				target, _ := graph().Role(f[2])
				return showErr(graph().CheckDropRole(f[0], f[1], target))
			case "grant-role", "revoke-role":
				g := graph()
				if err := g.CheckAdmin(f[0], f[1]); err != nil {
					return showErr(err)
				}
				var ms []Membership
				var note string
				if d.Cmd == "grant-role" {
					var err error
					if ms, note, err = g.GrantRole(f[0], f[1], f[2], has("admin")); err != nil {
						return showErr(err)
					}
				} else {
					ms, note = g.RevokeRole(f[1], f[2], has("admin"))
				}
				members = ms
				if note != "" {
					return note
				}
				return "ok"
			case "set-role":
				return showErr(graph().CheckSetRole(f[0], f[1]))
			case "default":
				if err := graph().CheckDefaultFor(f[0], f[1]); err != nil {
					return showErr(err)
				}
				ch := Change{Revoke: f[2] == "revoke", GrantOption: has("option"), Grantees: parseGrantees(f[4])}
				ch.Privs, ch.AllPrivs = parsePrivs(f[3], Relation)
				defaults = ApplyDefault(defaults, f[1], ch, testOID)
				if defaults == nil {
					return "(built-in default)"
				}
				return strings.Join(defaults.Strings(), ",")
			}
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		})
	})
}

func testOID(role string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(role))
	return h.Sum32()
}

func parsePrivs(s string, k Kind) (Privs, bool) {
	if s == "all" {
		return All(k), true
	}
	var p Privs
	for _, n := range strings.Split(s, ",") {
		x, ok := ParseName(n)
		if !ok {
			panic("unknown privilege " + n)
		}
		p |= x
	}
	return p, false
}

func parseGrantees(s string) []string {
	var out []string
	for _, g := range strings.Split(s, ",") {
		if g == "public" {
			g = ""
		}
		out = append(out, g)
	}
	return out
}

func showACL(acl ACL, obj Object) string {
	if acl == nil {
		return "acl: (default) " + strings.Join(Default(obj.Kind, obj.Owner).Strings(), ",")
	}
	return "acl: " + strings.Join(acl.Strings(), ",")
}

func showErr(err error) string {
	if err == nil {
		return "ok"
	}
	e := err.(*errs.Error)
	s := fmt.Sprintf("ERROR %s %s", e.SQLState, e.Message)
	if e.Hint != "" {
		s += " (HINT " + e.Hint + ")"
	}
	return s
}

// TestItemText checks aclitem's text form both ways.
func TestItemText(t *testing.T) {
	for _, tc := range []struct {
		it   Item
		text string
	}{
		{Item{Grantee: "postgres", Grantor: "postgres", Privs: All(Relation)}, "postgres=arwdDxt/postgres"},
		{Item{Grantee: "bob", Grantor: "postgres", Privs: Select, Grant: Select}, "bob=r*/postgres"},
		{Item{Grantee: "", Grantor: "postgres", Privs: Temporary | Connect}, "=Tc/postgres"},
		{Item{Grantee: "we ird", Grantor: "a\"b", Privs: Insert | Update, Grant: Update}, `"we ird"=aw*/"a""b"`},
		{Item{Grantee: "Éva", Grantor: "x", Privs: Usage | Create}, "Éva=UC/x"},
	} {
		if got := tc.it.String(); got != tc.text {
			t.Errorf("%+v: got %s, want %s", tc.it, got, tc.text)
		}
		back, err := ParseItem(tc.text)
		if err != nil || back != tc.it {
			t.Errorf("ParseItem(%s) = %+v, %v", tc.text, back, err)
		}
	}
	for _, bad := range []string{"", "bob", "bob=q/x", "bob=r", "bob=r/", `"bob=r/x`} {
		if _, err := ParseItem(bad); err == nil {
			t.Errorf("ParseItem(%q) succeeded", bad)
		}
	}
}

// TestParseCheck checks has_table_privilege's privilege text.
func TestParseCheck(t *testing.T) {
	p, g, err := ParseCheck(Relation, " select , Insert WITH GRANT OPTION")
	if err != nil || p != Select || g != Insert {
		t.Fatalf("got %v %v %v", p, g, err)
	}
	if _, _, err := ParseCheck(Relation, "usage"); err == nil || err.Error() != `unrecognized privilege type: "usage"` {
		t.Fatalf("usage on a table: %v", err)
	}
	if p, _, err := ParseCheck(Database, "temp, connect"); err != nil || p != Temporary|Connect {
		t.Fatalf("database: %v %v", p, err)
	}
}
