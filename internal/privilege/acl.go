package privilege

import (
	"sort"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// Privs is a set of privileges, one bit each, in the order PostgreSQL
// prints them (arwdDxtUCTc).
type Privs uint16

const (
	Insert     Privs = 1 << iota // a
	Select                       // r
	Update                       // w
	Delete                       // d
	Truncate                     // D
	References                   // x
	Trigger                      // t
	Usage                        // U
	Create                       // C
	Temporary                    // T
	Connect                      // c
)

// letters are the ACL letters of the privileges, bit by bit.
const letters = "arwdDxtUCTc"

// names are the privileges' SQL names, bit by bit.
var names = [...]string{"INSERT", "SELECT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER", "USAGE", "CREATE", "TEMPORARY", "CONNECT"}

// Kind is the kind of object an ACL belongs to.
type Kind uint8

const (
	// Relation is a table, a view or a materialized view.
	Relation Kind = iota
	Schema
	Database
)

// All returns every privilege an object of kind k can carry (what ALL
// PRIVILEGES grants).
func All(k Kind) Privs {
	switch k {
	case Schema:
		return Usage | Create
	case Database:
		return Create | Temporary | Connect
	}
	return Insert | Select | Update | Delete | Truncate | References | Trigger
}

// String is the privileges' letters, as in an ACL item without grant
// options.
func (p Privs) String() string {
	var b strings.Builder
	for i := 0; i < len(letters); i++ {
		if p&(1<<i) != 0 {
			b.WriteByte(letters[i])
		}
	}
	return b.String()
}

// Names returns the SQL names of the privileges, in letter order.
func (p Privs) Names() []string {
	var out []string
	for i, n := range names {
		if p&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// ParseName returns the privilege a SQL name (any case) stands for, and
// whether there is one. TEMP is TEMPORARY.
func ParseName(name string) (Privs, bool) {
	name = strings.ToUpper(strings.TrimSpace(name))
	if name == "TEMP" {
		return Temporary, true
	}
	for i, n := range names {
		if n == name {
			return 1 << i, true
		}
	}
	return 0, false
}

// Item is one ACL entry: what Grantor granted Grantee. Grant holds the
// privileges granted WITH GRANT OPTION, a subset of Privs. Grantee ""
// is PUBLIC.
type Item struct {
	Grantee, Grantor string
	Privs, Grant     Privs
}

// String is PostgreSQL's aclitem text: grantee=privs/grantor, each
// letter followed by '*' when held with grant option, names quoted
// where they are not plain identifiers.
func (it Item) String() string {
	var b strings.Builder
	if it.Grantee != "" {
		b.WriteString(quoteName(it.Grantee))
	}
	b.WriteByte('=')
	for i := 0; i < len(letters); i++ {
		if it.Privs&(1<<i) != 0 {
			b.WriteByte(letters[i])
			if it.Grant&(1<<i) != 0 {
				b.WriteByte('*')
			}
		}
	}
	b.WriteByte('/')
	b.WriteString(quoteName(it.Grantor))
	return b.String()
}

// quoteName quotes a role name as aclitem output does: names of letters,
// digits and underscores as they are, others in double quotes with
// inner quotes doubled.
func quoteName(n string) string {
	plain := n != ""
	for _, r := range n {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= 0x80) {
			plain = false
			break
		}
	}
	if plain {
		return n
	}
	return `"` + strings.ReplaceAll(n, `"`, `""`) + `"`
}

// ACL is an object's access control list. nil stands for the default of
// the object's kind (Default); an empty, non-nil ACL grants nothing.
type ACL []Item

// Default returns the ACL an object of kind k owned by owner has until
// its privileges are changed, as PostgreSQL's acldefault.
func Default(k Kind, owner string) ACL {
	switch k {
	case Database:
		return ACL{{Grantee: "", Grantor: owner, Privs: Temporary | Connect},
			{Grantee: owner, Grantor: owner, Privs: All(Database)}}
	}
	return ACL{{Grantee: owner, Grantor: owner, Privs: All(k)}}
}

// Strings returns the items' text forms (relacl's elements).
func (a ACL) Strings() []string {
	out := make([]string, len(a))
	for i, it := range a {
		out[i] = it.String()
	}
	return out
}

// Equal reports whether a and b hold the same items in the same order.
func (a ACL) Equal(b ACL) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (a ACL) clone() ACL { return append(ACL{}, a...) }

// find returns the index of the item of grantee and grantor, or -1.
func (a ACL) find(grantee, grantor string) int {
	for i, it := range a {
		if it.Grantee == grantee && it.Grantor == grantor {
			return i
		}
	}
	return -1
}

// Resolve returns acl, or kind's default for owner when acl is nil.
func Resolve(acl ACL, k Kind, owner string) ACL {
	if acl == nil {
		return Default(k, owner)
	}
	return acl
}

// add merges privs (and grant options) granted by grantor into
// grantee's item, appending one when there is none.
func (a ACL) add(grantee, grantor string, privs, grant Privs) ACL {
	out := a.clone()
	if i := out.find(grantee, grantor); i >= 0 {
		out[i].Privs |= privs
		out[i].Grant |= grant & privs
		return out
	}
	if privs == 0 {
		return out
	}
	return append(out, Item{Grantee: grantee, Grantor: grantor, Privs: privs, Grant: grant & privs})
}

// remove takes privs (with their grant options) from grantee's item of
// grantor, or only the grant options of privs when optionOnly; an item
// left with nothing is dropped. It returns the grant options removed.
func (a ACL) remove(grantee, grantor string, privs Privs, optionOnly bool) (ACL, Privs) {
	out := a.clone()
	i := out.find(grantee, grantor)
	if i < 0 {
		return out, 0
	}
	lost := out[i].Grant & privs
	out[i].Grant &^= privs
	if !optionOnly {
		out[i].Privs &^= privs
	}
	if out[i].Privs == 0 {
		out = append(out[:i], out[i+1:]...)
	}
	return out, lost
}

// SortByGrantee orders items by the given order of grantees (PostgreSQL
// sorts default-privilege ACLs by role OID), then grantor.
func (a ACL) SortByGrantee(key func(role string) uint32) {
	sort.SliceStable(a, func(i, j int) bool {
		ki, kj := key(a[i].Grantee), key(a[j].Grantee)
		if ki != kj {
			return ki < kj
		}
		return key(a[i].Grantor) < key(a[j].Grantor)
	})
}

// ParseItem parses an aclitem's text form (the inverse of Item.String).
func ParseItem(s string) (Item, error) {
	bad := func() (Item, error) {
		return Item{}, errs.Newf(errs.InvalidTextRep, "invalid input syntax for type aclitem: %q", s)
	}
	var it Item
	rest, name, ok := parseName(s)
	if !ok || rest == "" || rest[0] != '=' {
		return bad()
	}
	it.Grantee = name
	rest = rest[1:]
	for rest != "" && rest[0] != '/' {
		i := strings.IndexByte(letters, rest[0])
		if i < 0 {
			return bad()
		}
		it.Privs |= 1 << i
		rest = rest[1:]
		if rest != "" && rest[0] == '*' {
			it.Grant |= 1 << i
			rest = rest[1:]
		}
	}
	if rest == "" {
		return bad()
	}
	rest, it.Grantor, ok = parseName(rest[1:])
	if !ok || rest != "" || it.Grantor == "" {
		return bad()
	}
	return it, nil
}

// parseName reads a possibly quoted role name off the front of s.
func parseName(s string) (rest, name string, ok bool) {
	if strings.HasPrefix(s, `"`) {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] == '"' {
				if i+1 < len(s) && s[i+1] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				return s[i+1:], b.String(), true
			}
			b.WriteByte(s[i])
		}
		return "", "", false
	}
	i := strings.IndexAny(s, "=/")
	if i < 0 {
		return "", s, true
	}
	return s[i:], s[:i], true
}

// NewOwner returns acl after the object passes from oldOwner to
// newOwner: the old owner's items, as grantee and as grantor, become the
// new owner's, merged with those it already had (PostgreSQL's
// aclnewowner). A default ACL stays the default, now the new owner's.
func NewOwner(acl ACL, oldOwner, newOwner string) ACL {
	if acl == nil {
		return nil
	}
	out := ACL{}
	for _, it := range acl {
		if it.Grantee == oldOwner {
			it.Grantee = newOwner
		}
		if it.Grantor == oldOwner {
			it.Grantor = newOwner
		}
		out = out.add(it.Grantee, it.Grantor, it.Privs, it.Grant)
	}
	return out
}
