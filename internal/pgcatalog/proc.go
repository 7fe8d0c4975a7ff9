package pgcatalog

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// proc is one row of pg_proc: a function RockStream implements.
type proc struct {
	oid uint32
	types.FunctionSignature
	system bool // a system information function (funcs.go)
}

// firstProcOID starts the OIDs of pg_proc's rows. A function's OID is a
// hash of its signature, so that it stays the same whatever other
// functions are added; collisions move to the next free OID in signature
// order.
const (
	firstProcOID = 1 << 24
	procOIDRange = 1 << 24
)

// systemFunctionNames are the functions of funcs.go, for pg_proc.
var systemFunctionNames = []string{
	"col_description", "current_database", "current_schema", "current_schemas", "current_setting", "current_user",
	"format_type", "has_any_column_privilege", "has_database_privilege", "has_schema_privilege",
	"has_table_privilege", "obj_description", "pg_backend_pid", "pg_conf_load_time", "pg_encoding_to_char",
	"pg_function_is_visible", "pg_get_constraintdef", "pg_get_expr", "pg_get_function_arguments",
	"pg_get_function_identity_arguments", "pg_get_function_result", "pg_get_indexdef", "pg_get_partkeydef",
	"pg_get_ruledef", "pg_get_serial_sequence", "pg_get_statisticsobjdef_columns", "pg_get_triggerdef",
	"pg_get_userbyid", "pg_get_viewdef", "pg_indexes_size", "pg_is_in_recovery", "pg_postmaster_start_time",
	"pg_relation_is_publishable", "pg_relation_size", "pg_size_pretty", "pg_table_is_visible",
	"pg_table_size", "pg_total_relation_size", "pg_type_is_visible", "quote_ident", "session_user",
	"shobj_description", "to_regclass", "to_regnamespace", "to_regproc", "to_regrole", "to_regtype", "version",
	"pg_has_role",
}

var procs struct {
	once  sync.Once
	list  []proc
	byOID map[uint32]*proc
}

// allProcs returns pg_proc's rows.
func allProcs() []proc {
	procs.once.Do(func() {
		sigs := types.Functions()
		system := len(sigs)
		probe := New(nil, &Session{Setting: func(string) string { return "" }})
		for _, name := range systemFunctionNames {
			for _, f := range probe.SystemFunction(name) {
				sigs = append(sigs, types.FunctionSignature{Name: name, Args: f.Args, Result: f.Result, Volatility: 's'})
			}
		}
		procs.byOID = map[uint32]*proc{}
		procs.list = make([]proc, len(sigs))
		for i, s := range sigs {
			h := fnv.New32a()
			fmt.Fprint(h, s.Name)
			for _, a := range s.Args {
				fmt.Fprint(h, ",", a.OID())
			}
			oid := firstProcOID + h.Sum32()%procOIDRange
			for procs.byOID[oid] != nil {
				oid = firstProcOID + (oid-firstProcOID+1)%procOIDRange
			}
			procs.list[i] = proc{oid: oid, FunctionSignature: s, system: i >= system}
			procs.byOID[oid] = &procs.list[i]
		}
	})
	return procs.list
}

func procByOID(oid uint32) *proc {
	allProcs()
	return procs.byOID[oid]
}

func pgProcRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_proc")
	for _, p := range allProcs() {
		kind := "f"
		if p.Aggregate {
			kind = "a"
		}
		args := make([]types.Value, len(p.Args))
		for i, a := range p.Args {
			args[i] = types.MakeOID(a.OID())
		}
		b.row().set("proargtypes", types.MakeArray(types.Oid, args))
		b.set("oid", p.oid).set("proname", p.Name).set("pronamespace", uint32(pgCatalogNamespace)).
			set("proowner", uint32(bootstrapRoleOID)).set("prolang", uint32(internalLanguageOID)).
			set("procost", 1).set("prokind", kind).set("proisstrict", true).
			set("provolatile", string([]byte{p.Volatility})).set("proparallel", "s").
			set("pronargs", len(p.Args)).set("prorettype", p.Result.OID()).set("prosrc", p.Name).
			set("proargdefaults", nil).set("probin", nil).set("prosqlbody", nil)
	}
	c.userProcRows(b)
	return b.rows, nil
}

// splitQualified splits a possibly schema-qualified, possibly quoted name
// as the OID alias types' input functions read it: unquoted parts are
// lower-cased, quoted parts kept ("" inside quotes is one quote).
func splitQualified(s string) ([]string, bool) {
	var parts []string
	var cur strings.Builder
	inQuote := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case inQuote && ch == '"':
			if i+1 < len(s) && s[i+1] == '"' {
				cur.WriteByte('"')
				i++
			} else {
				inQuote = false
			}
		case inQuote:
			cur.WriteByte(ch)
		case ch == '"':
			inQuote = true
		case ch == '.':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			if ch >= 'A' && ch <= 'Z' {
				ch += 'a' - 'A'
			}
			cur.WriteByte(ch)
		}
	}
	if inQuote {
		return nil, false
	}
	return append(parts, cur.String()), true
}

// RegLookup implements types.RegCatalog for a session's query.
func (c *Catalog) RegLookup(id types.TypeID, name string) (uint32, string, error) {
	switch id {
	case types.RegType:
		t, ok := lookupTypeName(name)
		if !ok {
			n := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(name)), "pg_catalog.")
			if o := pseudoTypeOID(n); o != 0 {
				return o, n, nil
			}
			return 0, "", errs.Newf(errs.UndefinedObject, "type %q does not exist", name)
		}
		return t.OID(), t.ID.String(), nil
	}
	parts, ok := splitQualified(name)
	if !ok || len(parts) > 2 || (len(parts) == 2 && id != types.RegClass && id != types.RegProc) {
		return 0, "", errs.Newf(errs.InvalidTextRep, "invalid name syntax")
	}
	switch id {
	case types.RegClass:
		p := c.snapshot()
		if len(parts) == 2 && c.namespaceOID(parts[0]) == 0 {
			return 0, "", errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", parts[0])
		}
		r := p.find(strings.Join(parts, "."))
		if r != nil {
			return r.oid, c.relationDisplay(r, r.name), nil
		}
		for _, t := range p.rels {
			for _, ix := range t.indexes {
				if ix.name == parts[len(parts)-1] && (len(parts) == 1 || parts[0] == t.schema) {
					return ix.oid, c.relationDisplay(t, ix.name), nil
				}
			}
		}
		return 0, "", errs.Newf(errs.UndefinedTable, "relation %q does not exist", name)
	case types.RegNamespace:
		if o := c.namespaceOID(parts[0]); o != 0 {
			return o, quoteIdent(parts[0]), nil
		}
		return 0, "", errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", name)
	case types.RegRole:
		for _, r := range c.roles() {
			if r.name == parts[0] {
				return r.oid, quoteIdent(r.name), nil
			}
		}
		return 0, "", errs.Newf(errs.UndefinedObject, "role %q does not exist", name)
	case types.RegProc:
		if len(parts) == 2 && parts[0] != pgCatalogSchema {
			return 0, "", errs.Newf(errs.UndefinedFunction, "function %q does not exist", name)
		}
		fn := parts[len(parts)-1]
		for _, f := range pgTypes {
			for _, io := range []struct {
				oid  uint32
				name string
			}{{f.input, f.inputName}, {f.output, f.outputName}, {f.recv, f.recvName}, {f.send, f.sendName}} {
				if io.name == fn {
					return io.oid, io.name, nil
				}
			}
		}
		var found *proc
		for i, p := range allProcs() {
			if p.Name == fn {
				if found != nil {
					return 0, "", errs.Newf(errs.AmbiguousFunction, "more than one function named %q", name)
				}
				found = &allProcs()[i]
			}
		}
		if found == nil {
			return 0, "", errs.Newf(errs.UndefinedFunction, "function %q does not exist", name)
		}
		return found.oid, found.Name, nil
	}
	return 0, "", errs.Newf(errs.FeatureNotSupported, "type %s is not supported", id)
}

// relationDisplay is how regclass prints a relation: its name, qualified
// when the search path does not find it.
func (c *Catalog) relationDisplay(r *pgRelation, name string) string {
	if name == r.name && c.snapshot().visible(r) || name != r.name && slices.Contains(c.snapshot().path, r.schema) {
		return quoteIdent(name)
	}
	return quoteIdent(r.schema) + "." + quoteIdent(name)
}

// RegName implements types.RegCatalog for a session's query.
func (c *Catalog) RegName(id types.TypeID, oid uint32) (string, bool) {
	switch id {
	case types.RegClass:
		p := c.snapshot()
		if r := p.relation(oid); r != nil {
			return c.relationDisplay(r, r.name), true
		}
		if ix := p.indexes[oid]; ix != nil {
			return c.relationDisplay(ix.rel, ix.name), true
		}
	case types.RegType:
		if t, ok := types.TypeByOID(oid); ok && pgTypeByOID(oid) != nil {
			return t.String(), true
		}
		if n := pseudoTypeName(oid); n != "" {
			return n, true
		}
	case types.RegNamespace:
		if n := c.namespaceName(oid); n != "" {
			return quoteIdent(n), true
		}
	case types.RegRole:
		for _, r := range c.roles() {
			if r.oid == oid {
				return quoteIdent(r.name), true
			}
		}
	case types.RegProc:
		if p := procByOID(oid); p != nil {
			return p.Name, true
		}
		for _, f := range pgTypes {
			switch oid {
			case f.input:
				return f.inputName, true
			case f.output:
				return f.outputName, true
			case f.recv:
				return f.recvName, true
			case f.send:
				return f.sendName, true
			}
		}
	}
	return "", false
}
