package types

import (
	"slices"

	"github.com/rockstream/rockstream/internal/errs"
)

// Operator is a resolved binary or unary operator: the argument types its
// operands must be cast to first, its result type, and how to evaluate it.
type Operator struct {
	Name        string
	Left, Right Type // Left is Unknown-typed for a prefix operator
	Result      Type
	// Eval applies the operator to non-NULL operands already of types Left
	// and Right. An operator is strict unless NonStrict is set: a NULL
	// operand gives NULL without calling Eval.
	Eval func(a, b Value) (Value, error)
	// NonStrict is set for the array operators that see NULL operands
	// (array || element appends a NULL).
	NonStrict bool
	// zoned, for an operator of the session time zone, builds Eval for a
	// zone (InZone).
	zoned func(Zone) func(a, b Value) (Value, error)
}

// InZone returns o evaluated in the session time zone z: o itself unless
// its result depends on the zone (timestamptz + interval, timestamp <
// timestamptz, timestamptz || text).
func (o *Operator) InZone(z Zone) *Operator {
	if o.zoned == nil || z.IsUTC() {
		return o
	}
	c := *o
	c.Eval = o.zoned(z)
	return &c
}

// opDef is one entry of the operator catalog, like a pg_operator row.
type opDef struct {
	args   [2]TypeID // left, right; a prefix operator has one argument
	result TypeID
	eval   func(a, b Value) (Value, error)
	// op is shared by every resolution of a non-polymorphic operator.
	op *Operator
	// zoned builds eval for a session time zone (addZonedBinary).
	zoned func(Zone) func(a, b Value) (Value, error)
}

// addZonedBinary registers a binary operator whose result depends on
// the session time zone: zoned builds its evaluation for a zone.
func addZonedBinary(name string, l, r, result TypeID, zoned func(Zone) func(a, b Value) (Value, error)) {
	addBinary(name, l, r, result, zoned(UTCZone))
	ops := binaryOps[name]
	d := ops[len(ops)-1]
	d.zoned = zoned
	if d.op != nil {
		d.op.zoned = zoned
	}
}

// The catalog: binary and prefix operators by name.
var (
	binaryOps = map[string][]*opDef{}
	prefixOps = map[string][]*opDef{}
)

func addBinary(name string, l, r, result TypeID, eval func(a, b Value) (Value, error)) {
	d := &opDef{args: [2]TypeID{l, r}, result: result, eval: eval}
	if l != anyNonArray && r != anyNonArray {
		d.op = &Operator{Name: name, Left: Of(l), Right: Of(r), Result: Of(result), Eval: eval}
	}
	binaryOps[name] = append(binaryOps[name], d)
}

func addPrefix(name string, t, result TypeID, eval func(a, b Value) (Value, error)) {
	d := &opDef{args: [2]TypeID{t}, result: result, eval: eval}
	d.op = &Operator{Name: name, Left: Of(Unknown), Right: Of(t), Result: Of(result), Eval: eval}
	prefixOps[name] = append(prefixOps[name], d)
}

var comparisonNames = [...]string{"=", "<>", "<", "<=", ">", ">="}

// compareOps returns the six comparison operators' evaluators for an
// ordering function.
func compareOps(c func(a, b Value) int) [6]func(a, b Value) (Value, error) {
	return [6]func(a, b Value) (Value, error){
		func(a, b Value) (Value, error) { return MakeBool(c(a, b) == 0), nil },
		func(a, b Value) (Value, error) { return MakeBool(c(a, b) != 0), nil },
		func(a, b Value) (Value, error) { return MakeBool(c(a, b) < 0), nil },
		func(a, b Value) (Value, error) { return MakeBool(c(a, b) <= 0), nil },
		func(a, b Value) (Value, error) { return MakeBool(c(a, b) > 0), nil },
		func(a, b Value) (Value, error) { return MakeBool(c(a, b) >= 0), nil },
	}
}

// Integer comparisons are spelled out so that they compile to a single
// machine comparison.
var intCompareOps = [6]func(a, b Value) (Value, error){
	func(a, b Value) (Value, error) { return MakeBool(a.n == b.n), nil },
	func(a, b Value) (Value, error) { return MakeBool(a.n != b.n), nil },
	func(a, b Value) (Value, error) { return MakeBool(a.n < b.n), nil },
	func(a, b Value) (Value, error) { return MakeBool(a.n <= b.n), nil },
	func(a, b Value) (Value, error) { return MakeBool(a.n > b.n), nil },
	func(a, b Value) (Value, error) { return MakeBool(a.n >= b.n), nil },
}

func addComparisons(l, r TypeID, evals [6]func(a, b Value) (Value, error)) {
	for i, name := range comparisonNames {
		addBinary(name, l, r, Bool, evals[i])
	}
}

func init() {
	ints := []TypeID{Int2, Int4, Int8}
	wider := func(a, b TypeID) TypeID { return max(a, b) } // Int2 < Int4 < Int8
	for _, l := range ints {
		for _, r := range ints {
			k := wider(l, r)
			addBinary("+", l, r, k, intAdd(k))
			addBinary("-", l, r, k, intSub(k))
			addBinary("*", l, r, k, intMul(k))
			addBinary("/", l, r, k, intDiv(k))
			addComparisons(l, r, intCompareOps)
		}
		addBinary("%", l, l, l, intMod(l))
		addPrefix("-", l, l, intNeg(l))
		addPrefix("+", l, l, identity)
	}

	addBinary("+", Numeric, Numeric, Numeric, numAdd)
	addBinary("-", Numeric, Numeric, Numeric, numSub)
	addBinary("*", Numeric, Numeric, Numeric, numMul)
	addBinary("/", Numeric, Numeric, Numeric, numDiv)
	addBinary("%", Numeric, Numeric, Numeric, numMod)
	addPrefix("-", Numeric, Numeric, numNeg)
	addPrefix("+", Numeric, Numeric, identity)

	floats := []TypeID{Float4, Float8}
	for _, l := range floats {
		for _, r := range floats {
			k := max(l, r)
			addBinary("+", l, r, k, floatAdd(k))
			addBinary("-", l, r, k, floatSub(k))
			addBinary("*", l, r, k, floatMul(k))
			addBinary("/", l, r, k, floatDiv(k))
		}
		addPrefix("-", l, l, floatNeg(l))
		addPrefix("+", l, l, identity)
	}

	generic := compareOps(Compare)
	for _, t := range []TypeID{Bool, Numeric, Text, Bytea, Date, Timestamp, TimestampTZ, Interval} {
		addComparisons(t, t, generic)
	}
	for _, l := range floats {
		for _, r := range floats {
			addComparisons(l, r, generic)
		}
	}
	// Cross-type date/time comparisons. With the session time zone UTC, a
	// TIMESTAMP and a TIMESTAMPTZ with the same microseconds are equal.
	dateVsTs := compareOps(func(a, b Value) int { return compareDateTimestamp(a.Days(), b.n) })
	tsVsDate := compareOps(func(a, b Value) int { return -compareDateTimestamp(b.Days(), a.n) })
	tsVsTs := compareOps(func(a, b Value) int { return cmpInt64(a.n, b.n) })
	addComparisons(Date, Timestamp, dateVsTs)
	addComparisons(Date, TimestampTZ, dateVsTs)
	addComparisons(Timestamp, Date, tsVsDate)
	addComparisons(TimestampTZ, Date, tsVsDate)
	addComparisons(Timestamp, TimestampTZ, tsVsTs)
	addComparisons(TimestampTZ, Timestamp, tsVsTs)

	addBinary("+", Date, Int4, Date, dateAddInt)
	addBinary("+", Int4, Date, Date, intAddDate)
	addBinary("-", Date, Int4, Date, dateSubInt)
	addBinary("-", Date, Date, Int4, dateSubDate)
	addBinary("+", Date, Interval, Timestamp, dateAddInterval)
	addBinary("+", Interval, Date, Timestamp, intervalAddDate)
	addBinary("-", Date, Interval, Timestamp, dateSubInterval)
	for _, k := range []TypeID{Timestamp, TimestampTZ} {
		addBinary("+", k, Interval, k, tsAddInterval(k))
		addBinary("+", Interval, k, k, intervalAddTs(k))
		addBinary("-", k, Interval, k, tsSubInterval(k))
		addBinary("-", k, k, Interval, tsSubTs)
	}
	addBinary("+", Interval, Interval, Interval, ivAdd)
	addBinary("-", Interval, Interval, Interval, ivSub)
	addBinary("*", Interval, Float8, Interval, ivMulFloat)
	addBinary("*", Float8, Interval, Interval, floatMulIv)
	addBinary("/", Interval, Float8, Interval, ivDivFloat)
	addPrefix("-", Interval, Interval, ivNeg)

	addBinary("||", Text, Text, Text, textCat)
	addBinary("||", anyNonArray, Text, Text, anyTextCat)
	addBinary("||", Text, anyNonArray, Text, textAnyCat)
	addBinary("||", Bytea, Bytea, Bytea, byteaCat)
}

// ResolveBinary picks the operator op ("+", "-", "*", "/", "%", "=", "<>",
// "<", "<=", ">", ">=", "||") for operand types l and r by PostgreSQL's
// operator resolution rules (exact match, then implicit casts, then the
// preferred type of the category; Unknown operands take the other side's
// type). It fails with 42883 when none applies.
//
// The operator's Left and Right are the types to cast the operands to; an
// operand whose type has the same ID keeps its type (and modifiers), so no
// cast is needed for it. "!=" is accepted as "<>". The returned Operator
// may be shared and must not be modified.
func ResolveBinary(op string, l, r Type) (*Operator, error) {
	if op == "!=" {
		op = "<>"
	}
	cands := binaryOps[op]
	in := []TypeID{l.ID, r.ID}
	d, err := selectOperator(cands, in)
	if err != nil {
		return nil, errs.Newf(errs.AmbiguousFunction, "operator is not unique: %s %s %s", l.ID.baseName(), op, r.ID.baseName())
	}
	if d == nil {
		return nil, errs.Newf(errs.UndefinedFunction, "operator does not exist: %s %s %s", l.ID.baseName(), op, r.ID.baseName())
	}
	if d.eval == nil {
		return nil, errs.Newf(errs.FeatureNotSupported, "operator %s over json is not supported: type json is not supported", op)
	}
	if d.op != nil {
		keepL := l.ID == d.args[0] && l != d.op.Left
		keepR := r.ID == d.args[1] && r != d.op.Right
		if !keepL && !keepR {
			return d.op, nil
		}
		o := *d.op
		if keepL {
			o.Left = l
		}
		if keepR {
			o.Right = r
		}
		return &o, nil
	}
	// text || anynonarray and anynonarray || text: the polymorphic side
	// keeps the operand's own type.
	o := &Operator{Name: op, Result: Of(d.result), Eval: d.eval, zoned: d.zoned}
	o.Left, o.Right = opArg(d.args[0], l), opArg(d.args[1], r)
	if o.Left.ID == Unknown || o.Right.ID == Unknown {
		return nil, errs.New(errs.DatatypeMismatch, "could not determine polymorphic type because input has type unknown")
	}
	return o, nil
}

func opArg(arg TypeID, in Type) Type {
	if arg == anyNonArray || arg == in.ID {
		return in
	}
	return Of(arg)
}

// ResolveUnary picks the prefix operator op ("-", "+") for type t.
func ResolveUnary(op string, t Type) (*Operator, error) {
	cands := prefixOps[op]
	d, err := selectOperator(cands, []TypeID{t.ID})
	if err != nil {
		return nil, errs.Newf(errs.AmbiguousFunction, "operator is not unique: %s %s", op, t.ID.baseName())
	}
	if d == nil {
		return nil, errs.Newf(errs.UndefinedFunction, "operator does not exist: %s %s", op, t.ID.baseName())
	}
	if t.ID == d.args[0] && t != d.op.Right {
		o := *d.op
		o.Right = t
		return &o, nil
	}
	return d.op, nil
}

// errAmbiguous marks a resolution with several equally good candidates.
var errAmbiguous = errs.New(errs.UndefinedFunction, "ambiguous")

// selectOperator resolves an operator or function call over candidate
// signatures for the input types, as PostgreSQL's oper_select_candidate
// and func_select_candidate do. It returns nil, nil when no candidate
// accepts the inputs and errAmbiguous when several do equally well.
func selectOperator(cands []*opDef, in []TypeID) (*opDef, error) {
	n := len(in)
	if !slices.ContainsFunc(in, TypeID.IsArray) {
		// The array operators are polymorphic in PostgreSQL (anyarray,
		// anycompatible): without an array operand they only match by
		// coercing an untyped literal, which the category rules rank
		// below the string operators. Registered per element type here,
		// they would count as exact matches, so they are left out. The
		// json and jsonb operators over text[] (#>, ?|, -, ...) are not
		// polymorphic and stay.
		cands = slices.DeleteFunc(slices.Clone(cands), func(c *opDef) bool {
			return (c.args[0].IsArray() || c.args[1].IsArray()) && c.args[0] != Jsonb && c.args[0] != Json && c.args[0] != phantomUser
		})
	}
	// An exact match, with an unknown operand taken as the other's type.
	exact := [2]TypeID{}
	copy(exact[:], in)
	if n == 2 {
		if exact[0] == Unknown && exact[1] != Unknown {
			exact[0] = exact[1]
		} else if exact[1] == Unknown && exact[0] != Unknown {
			exact[1] = exact[0]
		}
	}
	for _, c := range cands {
		if c.args[0] == exact[0] && (n == 1 || c.args[1] == exact[1]) && c.args[0] != anyNonArray && c.args[1] != anyNonArray {
			return c, nil
		}
	}
	sigs := make([][]TypeID, len(cands))
	for i, c := range cands {
		sigs[i] = c.args[:n]
	}
	i, err := selectSignature(sigs, in)
	if i < 0 {
		return nil, err
	}
	return cands[i], nil
}
