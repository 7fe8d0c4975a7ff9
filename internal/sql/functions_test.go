package sql

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// The golden files define SQL functions with CREATE FUNCTION in a catalog
// command; testCatalog keeps each statement under a key no relation name
// can have and defines the function again when the binder asks for it.

const testFunctionKey = "\x00function "

// defineTestFunction checks CREATE FUNCTION n against cat and adds it.
func defineTestFunction(cat testCatalog, n *pg.Node) (string, error) {
	f, err := (&Binder{Cat: cat}).DefineFunction(n.GetCreateFunctionStmt())
	if err != nil {
		return "", err
	}
	cat[testFunctionKey+f.Signature()] = &Relation{Name: f.Name, Query: n}
	return "function " + f.Signature() + " returns " + f.Result.String(), nil
}

// SchemaExists implements FunctionCatalog: public alone.
func (c testCatalog) SchemaExists(name string) bool { return name == "public" }

// Functions implements FunctionCatalog.
func (c testCatalog) Functions(schema, name string) []*Function {
	if schema != "" && schema != "public" {
		return nil
	}
	var out []*Function
	for k, rel := range c {
		if !strings.HasPrefix(k, testFunctionKey+name+"(") {
			continue
		}
		if f, err := (&Binder{Cat: c}).DefineFunction(rel.Query.GetCreateFunctionStmt()); err == nil {
			out = append(out, f)
		}
	}
	return out
}

func formatUsedFunctions(b *Binder) string {
	if len(b.UsedFunctions) == 0 {
		return ""
	}
	return "functions: " + strings.Join(b.UsedFunctions, ", ") + "\n"
}
