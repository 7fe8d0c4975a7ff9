package types

// Compare orders two non-NULL values of the same kind as PostgreSQL's
// default btree opclass does (text bytewise, as the C collation; NaN greater
// than every other float; numeric by value). NULLs sort after every value,
// and two NULLs are equal, so Compare is a total order usable for sorting.
func Compare(a, b Value) int { panic("not yet implemented") }

