package types

// category is PostgreSQL's pg_type.typcategory, which drives operator
// resolution and UNION/CASE type resolution.
type category byte

const (
	catUnknown  category = 'X'
	catBool     category = 'B'
	catNumeric  category = 'N'
	catString   category = 'S'
	catUser     category = 'U' // bytea
	catDatetime category = 'D'
	catTimespan category = 'T'
	catPseudo   category = 'P' // anynonarray, in operator candidates only
	catInternal category = 'Z' // "char"
	catArray    category = 'A'
)

// anyNonArray is the pseudo-type of the polymorphic argument of the
// "anynonarray || text" operators. It never appears in a Value or a column.
const anyNonArray TypeID = 255

func (id TypeID) category() category {
	switch id {
	case Bool:
		return catBool
	case Int2, Int4, Int8, Numeric, Float4, Float8:
		return catNumeric
	case Text, Varchar:
		return catString
	case Bytea, Jsonb, Json:
		return catUser
	case Date, Timestamp, TimestampTZ, Time, TimeTZ:
		return catDatetime
	case Interval:
		return catTimespan
	case anyNonArray:
		return catPseudo
	case Oid, RegClass, RegType, RegProc, RegNamespace, RegRole:
		return catNumeric
	case Name:
		return catString
	case Char:
		return catInternal
	}
	if id.IsArray() {
		return catArray
	}
	if isPhantom(id) {
		c, _ := phantomCategory(id)
		return c
	}
	return catUnknown
}

// preferred reports whether id is the preferred type of its category.
func (id TypeID) preferred() bool {
	switch id {
	case Bool, Float8, Text, TimestampTZ, Interval:
		return true
	}
	return false
}

// implicitlyCoercible reports whether a value of type from may be converted
// to type to implicitly (pg_cast context 'i', unknown literals, and the
// polymorphic anynonarray).
func implicitlyCoercible(from, to TypeID) bool {
	if from == to || from == Unknown {
		return true
	}
	if to == anyNonArray {
		return !from.IsArray()
	}
	return CastContext(from, to) == ImplicitCast
}

// CastContext returns when a cast from one type to another is allowed, as
// PostgreSQL's pg_cast says. Casting a type to itself (to apply a type
// modifier) and an unknown literal to anything are implicit. Any type
// converts to text or varchar on assignment through its output function, and
// text and varchar convert to any type explicitly through its input
// function.
func CastContext(from, to TypeID) CastKind {
	if from == to {
		return ImplicitCast
	}
	if from == Unknown {
		return ImplicitCast
	}
	if from.IsArray() || to.IsArray() {
		return arrayCastContext(from, to)
	}
	if k, ok := catalogCastContext(from, to); ok {
		return k
	}
	if from == Json || to == Json {
		return jsonCastContext(from, to)
	}
	if from == Jsonb || to == Jsonb {
		return jsonbCastContext(from, to)
	}
	if to == Unknown || from > Interval && !isTimeOfDay(from) || to > Interval && !isTimeOfDay(to) {
		return NoCast
	}
	switch from {
	case Int2:
		switch to {
		case Int4, Int8, Numeric, Float4, Float8:
			return ImplicitCast
		}
	case Int4:
		switch to {
		case Int8, Numeric, Float4, Float8:
			return ImplicitCast
		case Int2:
			return AssignmentCast
		case Bool:
			return ExplicitCast
		}
	case Int8:
		switch to {
		case Numeric, Float4, Float8:
			return ImplicitCast
		case Int2, Int4:
			return AssignmentCast
		}
	case Numeric:
		switch to {
		case Float4, Float8:
			return ImplicitCast
		case Int2, Int4, Int8:
			return AssignmentCast
		}
	case Float4:
		switch to {
		case Float8:
			return ImplicitCast
		case Int2, Int4, Int8, Numeric:
			return AssignmentCast
		}
	case Float8:
		switch to {
		case Int2, Int4, Int8, Numeric, Float4:
			return AssignmentCast
		}
	case Bool:
		if to == Int4 {
			return ExplicitCast
		}
	case Text, Varchar:
		if to == Text || to == Varchar {
			return ImplicitCast
		}
		return ExplicitCast
	case Date:
		switch to {
		case Timestamp, TimestampTZ:
			return ImplicitCast
		}
	case Timestamp:
		switch to {
		case TimestampTZ:
			return ImplicitCast
		case Date, Time:
			return AssignmentCast
		}
	case TimestampTZ:
		switch to {
		case Date, Timestamp, Time, TimeTZ:
			return AssignmentCast
		}
	case Time:
		switch to {
		case Interval, TimeTZ:
			return ImplicitCast
		}
	case TimeTZ:
		if to == Time {
			return AssignmentCast
		}
	case Interval:
		if to == Time {
			return AssignmentCast
		}
	}
	if to == Text || to == Varchar {
		return AssignmentCast
	}
	return NoCast
}
