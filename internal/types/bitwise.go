package types

// PostgreSQL's bitwise operators on smallint, integer and bigint (int2and,
// int4shl, int8not, ...): & | # (exclusive or) between two operands of one
// type, the prefix ~, and the shifts << and >> by an integer count, each of
// the left operand's type. There are no cross-type variants: smallint &
// integer resolves to integer & integer by the usual casts.
//
// The shifts are C's shifts on the platforms PostgreSQL runs on (x86-64,
// arm64): the count is taken modulo the width the shift is computed in — 32
// for smallint and integer (C promotes a smallint to int before shifting),
// 64 for bigint — so 1 << 32 is 1 and 1 << -1 is -2147483648; >> is an
// arithmetic shift; a smallint result keeps the low 16 bits.

func init() {
	for _, k := range []TypeID{Int2, Int4, Int8} {
		addBinary("&", k, k, k, func(a, b Value) (Value, error) { return MakeInt(k, a.n&b.n), nil })
		addBinary("|", k, k, k, func(a, b Value) (Value, error) { return MakeInt(k, a.n|b.n), nil })
		addBinary("#", k, k, k, func(a, b Value) (Value, error) { return MakeInt(k, a.n^b.n), nil })
		addPrefix("~", k, k, func(a, _ Value) (Value, error) { return MakeInt(k, ^a.n), nil })
		addBinary("<<", k, Int4, k, func(a, b Value) (Value, error) { return MakeInt(k, shiftLeft(k, a.n, b.n)), nil })
		addBinary(">>", k, Int4, k, func(a, b Value) (Value, error) { return MakeInt(k, shiftRight(k, a.n, b.n)), nil })
	}
}

func shiftLeft(k TypeID, x, count int64) int64 {
	if k == Int8 {
		return x << (uint64(count) & 63)
	}
	r := int32(x) << (uint64(count) & 31)
	if k == Int2 {
		return int64(int16(r))
	}
	return int64(r)
}

func shiftRight(k TypeID, x, count int64) int64 {
	if k == Int8 {
		return x >> (uint64(count) & 63)
	}
	r := int32(x) >> (uint64(count) & 31)
	if k == Int2 {
		return int64(int16(r))
	}
	return int64(r)
}
