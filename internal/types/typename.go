package types

import (
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// Limits of the type modifiers, as PostgreSQL enforces them.
const (
	maxNumericPrecision = 1000
	minNumericScale     = -1000
	maxNumericScale     = 1000
	maxVarcharLength    = 10485760
	maxTimePrecision    = 6
)

// baseName returns t's name as format_type prints it without modifiers.
func (id TypeID) baseName() string {
	switch id {
	case Unknown:
		return "unknown"
	case Bool:
		return "boolean"
	case Int2:
		return "smallint"
	case Int4:
		return "integer"
	case Int8:
		return "bigint"
	case Numeric:
		return "numeric"
	case Float4:
		return "real"
	case Float8:
		return "double precision"
	case Text:
		return "text"
	case Varchar:
		return "character varying"
	case Bytea:
		return "bytea"
	case Date:
		return "date"
	case Timestamp:
		return "timestamp without time zone"
	case Time:
		return "time without time zone"
	case TimeTZ:
		return "time with time zone"
	case TimestampTZ:
		return "timestamp with time zone"
	case Interval:
		return "interval"
	case Jsonb:
		return "jsonb"
	case Json:
		return "json"
	}
	if id.IsArray() {
		return id.Elem().baseName() + "[]"
	}
	if c, ok := oidTypeInfo[id]; ok {
		return c.name
	}
	return "type" + strconv.Itoa(int(id))
}

// String returns the name of the type ID as format_type prints it without
// modifiers ("integer", "character varying", ...).
func (id TypeID) String() string { return id.baseName() }

// String returns t as PostgreSQL's format_type prints it: "integer",
// "bigint", "numeric(10,2)", "character varying(5)", "text",
// "timestamp without time zone", "double precision", ...
func (t Type) String() string {
	if t.Vector {
		return vectorName(t)
	}
	if t.ID.IsArray() {
		return t.Elem().String() + "[]"
	}
	switch t.ID {
	case Numeric:
		if t.Precision >= 0 {
			return "numeric(" + strconv.Itoa(int(t.Precision)) + "," + strconv.Itoa(int(t.Scale)) + ")"
		}
	case Varchar:
		if t.Length >= 0 {
			return "character varying(" + strconv.Itoa(int(t.Length)) + ")"
		}
	case Timestamp:
		if t.Precision >= 0 {
			return "timestamp(" + strconv.Itoa(int(t.Precision)) + ") without time zone"
		}
	case TimestampTZ:
		if t.Precision >= 0 {
			return "timestamp(" + strconv.Itoa(int(t.Precision)) + ") with time zone"
		}
	case Time:
		if t.Precision >= 0 {
			return "time(" + strconv.Itoa(int(t.Precision)) + ") without time zone"
		}
	case TimeTZ:
		if t.Precision >= 0 {
			return "time(" + strconv.Itoa(int(t.Precision)) + ") with time zone"
		}
	case Interval:
		name := "interval"
		if t.Fields != 0 {
			name += " " + t.Fields.String()
		}
		if t.Precision >= 0 {
			name += "(" + strconv.Itoa(int(t.Precision)) + ")"
		}
		return name
	}
	return t.ID.baseName()
}

// OID returns the PostgreSQL type OID of t (int4 = 23, text = 25, ...).
func (t Type) OID() uint32 {
	if t.Vector {
		return vectorOID(t)
	}
	return t.ID.OID()
}

// OID returns the PostgreSQL type OID of the type ID.
func (id TypeID) OID() uint32 {
	switch id {
	case Unknown:
		return 705
	case Bool:
		return 16
	case Int2:
		return 21
	case Int4:
		return 23
	case Int8:
		return 20
	case Numeric:
		return 1700
	case Float4:
		return 700
	case Float8:
		return 701
	case Text:
		return 25
	case Varchar:
		return 1043
	case Bytea:
		return 17
	case Date:
		return 1082
	case Timestamp:
		return 1114
	case Time:
		return 1083
	case TimeTZ:
		return 1266
	case TimestampTZ:
		return 1184
	case Interval:
		return 1186
	case Jsonb:
		return 3802
	case Json:
		return 114
	}
	if id.IsArray() {
		return arrayOID[id.Elem()]
	}
	return oidTypeInfo[id].oid
}

// TypeByOID returns the unconstrained type with the given PostgreSQL OID.
func TypeByOID(oid uint32) (Type, bool) {
	if t, ok := vectorByOID(oid); ok {
		return t, true
	}
	if oid == Json.OID() {
		return Of(Json), true
	}
	for id := Unknown; id <= TimeTZ; id++ {
		if id.OID() == oid {
			return Of(id), true
		}
		if HasArrayType(id) && arrayOID[id] == oid {
			return Of(ArrayOf(id)), true
		}
	}
	for id, c := range oidTypeInfo {
		if c.oid == oid {
			return Of(id), true
		}
		if arrayOID[id] == oid {
			return Of(ArrayOf(id)), true
		}
	}
	return Type{}, false
}

// NumericType returns the NUMERIC(precision, scale) type. A negative precision
// gives unconstrained NUMERIC.
func NumericType(precision, scale int32) Type {
	if precision < 0 {
		return Of(Numeric)
	}
	return Type{ID: Numeric, Precision: precision, Scale: scale, Length: -1}
}

// VarcharType returns VARCHAR(n); a negative n gives unbounded VARCHAR.
func VarcharType(n int32) Type {
	if n < 0 {
		return Of(Varchar)
	}
	return Type{ID: Varchar, Precision: -1, Scale: -1, Length: n}
}

// typeAliases maps every spelling of a supported type to its ID.
var typeAliases = map[string]TypeID{
	"bool": Bool, "boolean": Bool,
	"int2": Int2, "smallint": Int2,
	"int4": Int4, "int": Int4, "integer": Int4,
	"int8": Int8, "bigint": Int8,
	"numeric": Numeric, "decimal": Numeric, "dec": Numeric,
	"float4": Float4, "real": Float4,
	"float8": Float8, "double precision": Float8, "float": Float8,
	"text":    Text,
	"varchar": Varchar, "character varying": Varchar, "char varying": Varchar,
	"bytea":     Bytea,
	"date":      Date,
	"timestamp": Timestamp, "timestamp without time zone": Timestamp,
	"timestamptz": TimestampTZ, "timestamp with time zone": TimestampTZ,
	"time": Time, "time without time zone": Time,
	"timetz": TimeTZ, "time with time zone": TimeTZ,
	"interval": Interval,
	"jsonb":    Jsonb,
	"json":     Json,
	"unknown":  Unknown,
}

// unsupportedTypes are PostgreSQL types RockStream knows by name but does
// not implement; naming one fails with 0A000 rather than 42704.
var unsupportedTypes = map[string]bool{
	"bpchar": true, "character": true,
	"uuid": true, "xml": true,
	"money": true, "inet": true, "cidr": true, "macaddr": true, "macaddr8": true,
	"bit": true, "varbit": true, "bit varying": true,
	"point": true, "line": true, "lseg": true, "box": true, "path": true, "polygon": true, "circle": true,
	"tsvector": true, "tsquery": true, "regprocedure": true, "regoper": true, "regoperator": true, "regconfig": true, "regdictionary": true, "regcollation": true,
	"int4range": true, "int8range": true, "numrange": true, "tsrange": true, "tstzrange": true, "daterange": true,
	"record": true, "void": true, "anyelement": true, "anyarray": true, "anynonarray": true,
	"serial": true, "bigserial": true, "smallserial": true, "serial4": true, "serial8": true, "serial2": true,
	"pg_lsn": true, "txid_snapshot": true, "pg_snapshot": true, "xid": true, "cid": true, "tid": true,
}

// TypeByName resolves a type name as CREATE TABLE or CAST writes it
// ("int", "int4", "integer", "pg_catalog.int4", "varchar", "character
// varying", "timestamptz", "double precision", "decimal", ...) with its
// typmods (none, (n) or (p,s)). Unknown names fail with 42704, unsupported
// types with 0A000.
//
// Names match case-insensitively. A schema qualification must be
// pg_catalog. float(p) becomes real for p <= 24 and double precision up to
// 53, as in PostgreSQL's grammar; timestamp(p), timestamptz(p) and
// interval(p) keep their fractional-second precision in Type.Precision,
// INTERVAL DAY and the other interval field restrictions in Type.Fields.
func TypeByName(names []string, typmods []int32) (Type, error) {
	if len(names) == 0 {
		return Type{}, errs.New(errs.UndefinedObject, `type "" does not exist`)
	}
	name := strings.ToLower(names[len(names)-1])
	full := strings.Join(names, ".")
	if len(names) > 2 {
		return Type{}, errs.Newf(errs.FeatureNotSupported, "cross-database references are not implemented: %s", full)
	}
	if len(names) == 2 && !strings.EqualFold(names[0], "pg_catalog") {
		return Type{}, errs.Newf(errs.UndefinedObject, "type %q does not exist", full)
	}
	if strings.HasPrefix(name, "_") {
		// pg_type's name of an array type: "_" and the element's typname.
		elem, ok := typeAliases[name[1:]]
		if !ok {
			elem, ok = catalogTypeAliases[name[1:]]
		}
		if ok && HasArrayType(elem) && pgTypName(elem) == name[1:] {
			t, err := TypeByName([]string{name[1:]}, typmods)
			return ArrayType(t), err
		}
	}
	id, ok := typeAliases[name]
	if !ok {
		id, ok = catalogTypeAliases[name]
	}
	if !ok {
		if unsupportedTypes[name] {
			return Type{}, errs.Newf(errs.FeatureNotSupported, "type %s is not supported", name)
		}
		return Type{}, errs.Newf(errs.UndefinedObject, "type %q does not exist", full)
	}
	if name == "float" {
		// float(p) is real or double precision depending on p.
		if len(typmods) == 0 {
			return Of(Float8), nil
		}
		if len(typmods) > 1 {
			return Type{}, errs.New(errs.SyntaxError, `syntax error at or near ","`)
		}
		p := typmods[0]
		switch {
		case p < 1:
			return Type{}, errs.New(errs.InvalidParameterValue, "precision for type float must be at least 1 bit")
		case p <= 24:
			return Of(Float4), nil
		case p <= 53:
			return Of(Float8), nil
		default:
			return Type{}, errs.New(errs.InvalidParameterValue, "precision for type float must be less than 54 bits")
		}
	}
	t := Of(id)
	if len(typmods) == 0 {
		return t, nil
	}
	switch id {
	case Numeric:
		if len(typmods) > 2 {
			return Type{}, errs.New(errs.InvalidParameterValue, "invalid NUMERIC type modifier")
		}
		p, s := typmods[0], int32(0)
		if len(typmods) == 2 {
			s = typmods[1]
		}
		if p < 1 || p > maxNumericPrecision {
			return Type{}, errs.Newf(errs.InvalidParameterValue, "NUMERIC precision %d must be between 1 and %d", p, maxNumericPrecision)
		}
		if s < minNumericScale || s > maxNumericScale {
			return Type{}, errs.Newf(errs.InvalidParameterValue, "NUMERIC scale %d must be between %d and %d", s, minNumericScale, maxNumericScale)
		}
		return NumericType(p, s), nil
	case Varchar:
		if len(typmods) > 1 {
			return Type{}, errs.New(errs.InvalidParameterValue, "invalid type modifier")
		}
		n := typmods[0]
		if n < 1 {
			return Type{}, errs.New(errs.InvalidParameterValue, "length for type varchar must be at least 1")
		}
		if n > maxVarcharLength {
			return Type{}, errs.Newf(errs.InvalidParameterValue, "length for type varchar cannot exceed %d", maxVarcharLength)
		}
		return VarcharType(n), nil
	case Timestamp, TimestampTZ, Time, TimeTZ:
		if len(typmods) > 1 {
			return Type{}, errs.New(errs.InvalidParameterValue, "invalid type modifier")
		}
		p := typmods[0]
		if p < 0 {
			name, suffix := "TIMESTAMP", ""
			if id == TimestampTZ || id == TimeTZ {
				suffix = " WITH TIME ZONE"
			}
			if id == Time || id == TimeTZ {
				name = "TIME"
			}
			return Type{}, errs.Newf(errs.InvalidParameterValue, "%s(%d)%s precision must not be negative", name, p, suffix)
		}
		if p > maxTimePrecision {
			p = maxTimePrecision // PostgreSQL warns and reduces it
		}
		t.Precision = p
		return t, nil
	case Interval:
		// pg_query passes INTERVAL's typmods as (fields mask[, precision]).
		fields, err := intervalFieldsOf(typmods[0])
		if err != nil {
			return Type{}, err
		}
		t.Fields = fields
		if len(typmods) == 1 {
			return t, nil
		}
		if len(typmods) > 2 {
			return Type{}, errs.New(errs.SyntaxError, "invalid INTERVAL type modifier")
		}
		p := typmods[1]
		if p < 0 {
			return Type{}, errs.Newf(errs.InvalidParameterValue, "INTERVAL(%d) precision must not be negative", p)
		}
		if p > maxTimePrecision {
			p = maxTimePrecision
		}
		t.Precision = p
		return t, nil
	}
	return Type{}, errs.Newf(errs.SyntaxError, "type modifier is not allowed for type %q", pgTypName(id))
}

// pgTypName returns the pg_type.typname of id ("int4", "varchar", ...).
func pgTypName(id TypeID) string {
	switch id {
	case Bool:
		return "bool"
	case Int2:
		return "int2"
	case Int4:
		return "int4"
	case Int8:
		return "int8"
	case Numeric:
		return "numeric"
	case Float4:
		return "float4"
	case Float8:
		return "float8"
	case Text:
		return "text"
	case Varchar:
		return "varchar"
	case Bytea:
		return "bytea"
	case Date:
		return "date"
	case Timestamp:
		return "timestamp"
	case Time:
		return "time"
	case TimeTZ:
		return "timetz"
	case TimestampTZ:
		return "timestamptz"
	case Interval:
		return "interval"
	case Jsonb:
		return "jsonb"
	case Json:
		return "json"
	}
	if id.IsArray() {
		return "_" + pgTypName(id.Elem())
	}
	if c, ok := oidTypeInfo[id]; ok {
		return c.typname
	}
	return "unknown"
}

// TypName returns the pg_type.typname of t ("int4", "varchar", ...), as
// pg_catalog shows it.
func (t Type) TypName() string {
	if t.Vector {
		return vectorName(t)
	}
	return pgTypName(t.ID)
}
