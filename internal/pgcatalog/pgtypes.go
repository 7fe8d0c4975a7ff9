package pgcatalog

import (
	"strings"

	"github.com/rockstream/rockstream/internal/types"
)

// pgTypeFacts are pg_type's facts about the types RockStream has, as
// PostgreSQL 15 has them: storage (typlen, typbyval, typalign,
// typstorage), array type and I/O functions (OID and name).
type pgTypeFacts struct {
	id         types.TypeID
	typlen     int
	byval      bool
	align      byte
	storage    byte
	array      uint32
	collation  uint32
	input      uint32
	inputName  string
	output     uint32
	outputName string
	recv       uint32
	recvName   string
	send       uint32
	sendName   string
	// vector marks int2vector and oidvector, whose id is int2[] or
	// oid[] (types.Type.Vector).
	vector bool
}

// typ returns the type f describes.
func (f *pgTypeFacts) typ() types.Type {
	if f.vector {
		if f.id == types.ArrayOf(types.Oid) {
			return types.OidVectorType()
		}
		return types.Int2VectorType()
	}
	return types.Of(f.id)
}

var pgTypes = []pgTypeFacts{
	{types.Bool, 1, true, 'c', 'p', 1000, 0, 1242, "boolin", 1243, "boolout", 2436, "boolrecv", 2437, "boolsend", false},
	{types.Bytea, -1, false, 'i', 'x', 1001, 0, 1244, "byteain", 31, "byteaout", 2412, "bytearecv", 2413, "byteasend", false},
	{types.Char, 1, true, 'c', 'p', 1002, 0, 1245, "charin", 33, "charout", 2434, "charrecv", 2435, "charsend", false},
	{types.Name, 64, false, 'c', 'p', 1003, cCollationOID, 34, "namein", 35, "nameout", 2422, "namerecv", 2423, "namesend", false},
	{types.Int8, 8, true, 'd', 'p', 1016, 0, 460, "int8in", 461, "int8out", 2408, "int8recv", 2409, "int8send", false},
	{types.Int2, 2, true, 's', 'p', 1005, 0, 38, "int2in", 39, "int2out", 2404, "int2recv", 2405, "int2send", false},
	{types.Int4, 4, true, 'i', 'p', 1007, 0, 42, "int4in", 43, "int4out", 2406, "int4recv", 2407, "int4send", false},
	{types.RegProc, 4, true, 'i', 'p', 1008, 0, 44, "regprocin", 45, "regprocout", 2444, "regprocrecv", 2445, "regprocsend", false},
	{types.Text, -1, false, 'i', 'x', 1009, defaultCollationOID, 46, "textin", 47, "textout", 2414, "textrecv", 2415, "textsend", false},
	{types.Oid, 4, true, 'i', 'p', 1028, 0, 1798, "oidin", 1799, "oidout", 2418, "oidrecv", 2419, "oidsend", false},
	{types.Float4, 4, true, 'i', 'p', 1021, 0, 200, "float4in", 201, "float4out", 2424, "float4recv", 2425, "float4send", false},
	{types.Float8, 8, true, 'd', 'p', 1022, 0, 214, "float8in", 215, "float8out", 2426, "float8recv", 2427, "float8send", false},
	{types.Unknown, -2, false, 'c', 'p', 0, 0, 109, "unknownin", 110, "unknownout", 2416, "unknownrecv", 2417, "unknownsend", false},
	{types.Varchar, -1, false, 'i', 'x', 1015, defaultCollationOID, 1046, "varcharin", 1047, "varcharout", 2432, "varcharrecv", 2433, "varcharsend", false},
	{types.Date, 4, true, 'i', 'p', 1182, 0, 1084, "date_in", 1085, "date_out", 2468, "date_recv", 2469, "date_send", false},
	{types.Time, 8, true, 'd', 'p', 1183, 0, 1143, "time_in", 1144, "time_out", 2470, "time_recv", 2471, "time_send", false},
	{types.TimeTZ, 12, false, 'd', 'p', 1270, 0, 1350, "timetz_in", 1351, "timetz_out", 2472, "timetz_recv", 2473, "timetz_send", false},
	{types.Timestamp, 8, true, 'd', 'p', 1115, 0, 1312, "timestamp_in", 1313, "timestamp_out", 2474, "timestamp_recv", 2475, "timestamp_send", false},
	{types.TimestampTZ, 8, true, 'd', 'p', 1185, 0, 1150, "timestamptz_in", 1151, "timestamptz_out", 2476, "timestamptz_recv", 2477, "timestamptz_send", false},
	{types.Interval, 16, false, 'd', 'p', 1187, 0, 1160, "interval_in", 1161, "interval_out", 2478, "interval_recv", 2479, "interval_send", false},
	{types.Jsonb, -1, false, 'i', 'x', 3807, 0, 3806, "jsonb_in", 3804, "jsonb_out", 3805, "jsonb_recv", 3803, "jsonb_send", false},
	{types.Json, -1, false, 'i', 'x', 199, 0, 321, "json_in", 322, "json_out", 323, "json_recv", 324, "json_send", false},
	{types.Numeric, -1, false, 'i', 'm', 1231, 0, 1701, "numeric_in", 1702, "numeric_out", 2460, "numeric_recv", 2461, "numeric_send", false},
	{types.RegClass, 4, true, 'i', 'p', 2210, 0, 2218, "regclassin", 2219, "regclassout", 2452, "regclassrecv", 2453, "regclasssend", false},
	{types.RegType, 4, true, 'i', 'p', 2211, 0, 2220, "regtypein", 2221, "regtypeout", 2454, "regtyperecv", 2455, "regtypesend", false},
	{types.RegNamespace, 4, true, 'i', 'p', 4090, 0, 4084, "regnamespacein", 4085, "regnamespaceout", 4087, "regnamespacerecv", 4088, "regnamespacesend", false},
	{types.RegRole, 4, true, 'i', 'p', 4097, 0, 4098, "regrolein", 4092, "regroleout", 4094, "regrolerecv", 4095, "regrolesend", false},
}

// Array types: pg_type's row of each base type's array type.
func init() {
	for _, f := range pgTypes {
		if f.array == 0 || !types.HasArrayType(f.id) {
			continue
		}
		align := byte('i')
		if f.align == 'd' {
			align = 'd'
		}
		pgTypes = append(pgTypes, pgTypeFacts{types.ArrayOf(f.id), -1, false, align, 'x', 0, f.collation,
			750, "array_in", 751, "array_out", 2400, "array_recv", 2401, "array_send", false})
	}
	// The vector types of the system catalog (their own arrays, _int2vector
	// and _oidvector, are not here).
	pgTypes = append(pgTypes,
		pgTypeFacts{types.ArrayOf(types.Int2), -1, false, 'i', 'p', 0, 0, 40, "int2vectorin", 41, "int2vectorout", 2410, "int2vectorrecv", 2411, "int2vectorsend", true},
		pgTypeFacts{types.ArrayOf(types.Oid), -1, false, 'i', 'p', 0, 0, 54, "oidvectorin", 55, "oidvectorout", 2420, "oidvectorrecv", 2421, "oidvectorsend", true})
}

// pseudoTypes are PostgreSQL's pseudo-types that catalog queries name
// ('trigger'::regtype): they have pg_type rows and OIDs, and no values.
var pseudoTypes = []struct {
	name string
	oid  uint32
}{
	{"any", 2276}, {"anyarray", 2277}, {"anycompatible", 5077}, {"anyelement", 2283}, {"anynonarray", 2776},
	{"cstring", 2275}, {"event_trigger", 3838}, {"internal", 2281}, {"record", 2249}, {"trigger", 2279},
	{"void", 2278},
}

func pseudoTypeOID(name string) uint32 {
	for _, p := range pseudoTypes {
		if p.name == name {
			return p.oid
		}
	}
	return 0
}

func pseudoTypeName(oid uint32) string {
	for _, p := range pseudoTypes {
		if p.oid == oid {
			return p.name
		}
	}
	return ""
}

// pgTypeByOID returns the facts of the type with the given OID.
func pgTypeByOID(oid uint32) *pgTypeFacts {
	for i := range pgTypes {
		if pgTypes[i].typ().OID() == oid {
			return &pgTypes[i]
		}
	}
	return nil
}

// pgTypeFactsOf returns the facts of t.
func pgTypeFactsOf(t types.Type) *pgTypeFacts { return pgTypeByOID(t.OID()) }

// lookupTypeName resolves a type name as regtype's input does: any
// spelling TypeByName accepts, with or without pg_catalog, and with
// modifiers ("character varying(10)" is character varying).
func lookupTypeName(s string) (types.Type, bool) {
	name := strings.TrimSpace(s)
	if i := strings.IndexByte(name, '('); i >= 0 && strings.HasSuffix(name, ")") {
		name = strings.TrimSpace(name[:i])
	}
	var parts []string
	if strings.HasPrefix(name, `"`) && strings.HasSuffix(name, `"`) && len(name) > 1 {
		parts = []string{name[1 : len(name)-1]}
	} else {
		for _, p := range strings.SplitN(name, ".", 2) {
			parts = append(parts, strings.Trim(strings.ToLower(p), `"`))
		}
	}
	t, err := types.TypeByName(parts, nil)
	if err != nil || pgTypeFactsOf(t) == nil {
		return types.Type{}, false
	}
	return t, true
}
