package types

import (
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// The scalar function catalog: PostgreSQL 15's built-in functions on the
// supported types, each overload with its argument and result types (as
// pg_proc has them), resolved by PostgreSQL's function resolution rules.
//
// Overloads over types RockStream does not have (bit, character, name,
// ranges, macaddr, time, ...) are listed too, as phantom candidates: they
// take part in resolution exactly as in PostgreSQL, so that a call with
// untyped literals resolves, or is ambiguous, as it is there (trunc('1.5')
// is ambiguous because of trunc(macaddr)), but a call can never bind to
// one, since no value has a phantom type.

// Function is a resolved scalar function call.
type Function struct {
	Name string
	// Args are the types the arguments must be converted to before Eval
	// sees them. An argument whose type has the same ID keeps its own type.
	Args   []Type
	Result Type
	// NonStrict is set when Eval must see NULL arguments; a strict
	// function's result is NULL whenever an argument is NULL, without
	// calling Eval.
	NonStrict bool
	// Eval computes the result from arguments of types Args.
	Eval func(args []Value) (Value, error)
	// zoned, for a function of the session time zone, builds Eval for
	// a zone (InZone); Eval is its UTC evaluation.
	zoned func(Zone) func(args []Value) (Value, error)
	// Immutable is PostgreSQL's volatility class 'i': the result depends
	// on the arguments alone, so a call over constants may be computed
	// once. (Stable functions, such as to_char, also depend on session
	// settings; RockStream's are fixed, but PostgreSQL does not fold them
	// and neither does the binder.)
	Immutable bool
}

// funcDef is one pg_proc entry.
type funcDef struct {
	args      []TypeID
	result    TypeID
	nonStrict bool
	eval      func(args []Value) (Value, error)
	// unsupported, when set, is the reason the overload exists in
	// PostgreSQL but is rejected here (SQL regular-expression substring).
	unsupported string
	// stable marks PostgreSQL's volatility class 's' (the others here are
	// immutable).
	stable bool
	// zoned builds eval for a session time zone (addZoned).
	zoned func(Zone) func(args []Value) (Value, error)
}

// addZoned registers an overload whose result depends on the session
// time zone: zoned builds its evaluation for a zone. It is stable.
func addZoned(name string, result TypeID, zoned func(Zone) func([]Value) (Value, error), args ...TypeID) *funcDef {
	d := addFunc(name, result, zoned(UTCZone), args...)
	d.zoned, d.stable = zoned, true
	return d
}

// InZone returns f evaluated in the session time zone z: f itself unless
// its result depends on the zone.
func (f *Function) InZone(z Zone) *Function {
	if f.zoned == nil || z.IsUTC() && !z.dated {
		return f
	}
	c := *f
	c.Eval = f.zoned(z)
	return &c
}

// functions maps a function name to its overloads.
var functions = map[string][]*funcDef{}

// addFunc registers an overload of name.
func addFunc(name string, result TypeID, eval func([]Value) (Value, error), args ...TypeID) *funcDef {
	d := &funcDef{args: args, result: result, eval: eval}
	functions[name] = append(functions[name], d)
	return d
}

// addPhantom registers overloads over types RockStream does not have; each
// entry of sigs is one overload's argument list.
func addPhantom(name string, sigs ...[]TypeID) {
	for _, s := range sigs {
		functions[name] = append(functions[name], &funcDef{args: s, result: Unknown})
	}
}

// addUnsupported registers an overload that PostgreSQL has and RockStream
// rejects with 0A000, giving why.
func addUnsupported(name, why string, result TypeID, args ...TypeID) {
	functions[name] = append(functions[name], &funcDef{args: args, result: result, unsupported: why})
}

// Phantom types: stand-ins for PostgreSQL types that only appear in the
// signatures of overloads RockStream does not implement. They have
// PostgreSQL's categories and preferred flags and no casts, so only an
// untyped literal can reach them in resolution.
const (
	phantomBit      TypeID = 200 + iota // bit, varbit: category V
	phantomBpchar                       // character: S
	phantomName                         // name: S
	phantomGeometry                     // lseg, path: G
	phantomUser                         // tsvector, macaddr, macaddr8, xid: U
	phantomAny                          // anyrange, anymultirange, anycompatible...: P
	phantomArray                        // anycompatiblearray: P
)

func isPhantom(id TypeID) bool { return id >= phantomBit && id <= phantomArray }

// phantomCategory returns a phantom type's category and preferred flag.
func phantomCategory(id TypeID) (category, bool) {
	switch id {
	case phantomBit:
		return 'V', false
	case phantomBpchar, phantomName:
		return catString, false
	case phantomGeometry:
		return 'G', false
	case phantomUser:
		return catUser, false
	}
	return catPseudo, false
}

// IsFunction reports whether name (lower case) is a function of the
// catalog.
func IsFunction(name string) bool { return len(functions[name]) > 0 }

// ResolveFunction resolves a call of the function name over arguments of
// the given types, as PostgreSQL's func_get_detail does: an exact match of
// the argument types, else the candidate that implicit coercions, exact
// and preferred types and the categories of untyped arguments single out.
// display is the name as the call wrote it, for messages.
//
// It fails with 42883 when no overload accepts the arguments, 42725 when
// several do equally well, and 0A000 for overloads RockStream does not
// implement.
func ResolveFunction(display, name string, args []Type) (*Function, error) {
	cands := functions[name]
	in := make([]TypeID, len(args))
	for i, a := range args {
		in[i] = a.ID
	}
	var d *funcDef
	for _, c := range cands {
		if equalIDs(c.args, in) {
			d = c
			break
		}
	}
	if d == nil {
		sigs := make([][]TypeID, len(cands))
		for i, c := range cands {
			sigs[i] = c.args
		}
		i, err := selectSignature(sigs, in)
		if err != nil {
			return nil, errs.Newf(errs.AmbiguousFunction, "function %s(%s) is not unique", display, typeList(args))
		}
		if i < 0 {
			return nil, errs.Newf(errs.UndefinedFunction, "function %s(%s) does not exist", display, typeList(args))
		}
		d = cands[i]
	}
	if d.unsupported != "" {
		return nil, errs.Newf(errs.FeatureNotSupported, "function %s(%s) is not supported yet: %s", display, idList(d.args), d.unsupported)
	}
	if d.eval == nil {
		return nil, errs.Newf(errs.FeatureNotSupported, "function %s(%s) is not supported: its argument types are not supported", display, idList(d.args))
	}
	f := &Function{Name: name, Result: Of(d.result), NonStrict: d.nonStrict, Eval: d.eval, Immutable: !d.stable, zoned: d.zoned}
	f.Args = make([]Type, len(d.args))
	for i, t := range d.args {
		if args[i].ID == t {
			f.Args[i] = args[i]
		} else {
			f.Args[i] = Of(t)
		}
	}
	return f, nil
}

func equalIDs(a, b []TypeID) bool {
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

// typeList renders argument types as PostgreSQL's messages list them.
func typeList(ts []Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.ID.baseName()
	}
	return strings.Join(parts, ", ")
}

func idList(ids []TypeID) string {
	parts := make([]string, len(ids))
	for i, t := range ids {
		parts[i] = sigTypeName(t)
	}
	return strings.Join(parts, ", ")
}

func sigTypeName(id TypeID) string {
	switch id {
	case phantomBit:
		return "bit"
	case phantomBpchar:
		return "character"
	case phantomName:
		return "name"
	case phantomGeometry:
		return "geometric type"
	case phantomUser:
		return "other type"
	case phantomAny, phantomArray:
		return "anyelement"
	}
	return id.baseName()
}
