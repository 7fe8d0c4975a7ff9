package pgcdc

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// EngineTarget applies a source's changes to RockStream tables through
// the engine's ingestion, which commits each batch and the progress in one
// epoch.
type EngineTarget struct {
	eng    *runtime.Engine
	source string
	// names are the RockStream tables, by position in the source's tables.
	names []string
	sess  *runtime.Session
	// report, when set, hears how many changes each batch applied.
	report func(n int)
}

// NewEngineTarget returns the target writing tables (upstream) into the
// RockStream tables of the same position in names, for source.
func NewEngineTarget(eng *runtime.Engine, source string, tables []Table, names []string) *EngineTarget {
	return &EngineTarget{eng: eng, source: source, names: names, sess: eng.NewSession()}
}

// Progress implements Target.
func (t *EngineTarget) Progress(context.Context) ([]byte, error) {
	return t.eng.SourceProgress(t.source)
}

// Apply implements Target.
func (t *EngineTarget) Apply(ctx context.Context, ops []Op, progress []byte) error {
	changes := make([]runtime.RowChange, len(ops))
	for i, op := range ops {
		changes[i] = runtime.RowChange{Table: t.names[op.Table], Op: op.Kind, Row: op.Row}
	}
	res, err := t.eng.Ingest(ctx, &runtime.Ingest{Source: t.source, Changes: changes, Progress: progress})
	if err == nil && t.report != nil {
		t.report(res.Applied)
	}
	return err
}

// RowByKey implements RowReader with a query by primary key. It serves
// only the rare UPDATE whose new row left out an unchanged TOASTed value
// under the default replica identity.
func (t *EngineTarget) RowByKey(table int, key zset.Row) (zset.Row, bool, error) {
	cols, pk, err := t.eng.TableColumns(t.names[table])
	if err != nil {
		return nil, false, err
	}
	var where []string
	var params []*string
	for i, k := range pk {
		where = append(where, fmt.Sprintf("%s = $%d", QuoteIdent(cols[k].Name), i+1))
		s := types.Format(key[k], cols[k].Type)
		params = append(params, &s)
	}
	res, err := t.sess.Exec(context.Background(), "SELECT * FROM "+QuoteIdent(t.names[table])+" WHERE "+strings.Join(where, " AND "), params)
	if err != nil || len(res.Rows) == 0 {
		return nil, false, err
	}
	return res.Rows[0], true, nil
}

// CheckTables verifies that each RockStream table can hold its upstream
// table: the same column names in the same order, the same types, and the
// same primary key when PostgreSQL identifies old rows by key.
func CheckTables(eng *runtime.Engine, tables []Table, names []string) error {
	for i := range tables {
		up := &tables[i]
		cols, pk, err := eng.TableColumns(names[i])
		if err != nil {
			return err
		}
		where := fmt.Sprintf("table %q cannot hold upstream table %s.%s", names[i], up.Schema, up.Name)
		if len(cols) != len(up.Columns) {
			return fmt.Errorf("%s: it has %d columns, upstream %d", where, len(cols), len(up.Columns))
		}
		for j, c := range cols {
			u := up.Columns[j]
			if c.Name != u.Name {
				return fmt.Errorf("%s: column %d is %q, upstream %q", where, j+1, c.Name, u.Name)
			}
			if c.Type != u.Type {
				return fmt.Errorf("%s: column %q is %s, upstream %s (RockStream type %s)", where, c.Name, c.Type, pgTypeName(u), u.Type)
			}
		}
		if !up.FullIdentity && !slices.Equal(pk, up.Key) {
			return fmt.Errorf("%s: its primary key must be the upstream one, %s, since PostgreSQL identifies old rows by it (or set REPLICA IDENTITY FULL upstream)", where, keyNames(up))
		}
	}
	return nil
}

func pgTypeName(c Column) string {
	if c.OID == oidBpchar {
		return "character"
	}
	return c.Type.String()
}

func keyNames(t *Table) string {
	var n []string
	for _, k := range t.Key {
		n = append(n, t.Columns[k].Name)
	}
	return "(" + strings.Join(n, ", ") + ")"
}
