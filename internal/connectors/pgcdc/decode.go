package pgcdc

import (
	"fmt"

	"github.com/jackc/pglogrepl"

	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// ChangeKind is what a Change does to its table.
type ChangeKind uint8

const (
	Insert ChangeKind = iota + 1
	Update
	Delete
	Truncate
)

func (k ChangeKind) String() string {
	switch k {
	case Insert:
		return "INSERT"
	case Update:
		return "UPDATE"
	case Delete:
		return "DELETE"
	case Truncate:
		return "TRUNCATE"
	}
	return fmt.Sprintf("ChangeKind(%d)", uint8(k))
}

// Change is one row change of an upstream transaction.
type Change struct {
	Table int // position in the Decoder's tables
	Kind  ChangeKind
	// Old is the old row of an UPDATE or DELETE: the whole row when
	// OldKeyOnly is false, else only the key columns set (the others
	// NULL). For an UPDATE that kept the key, PostgreSQL sends no old
	// tuple under the default replica identity; Old is then nil and the
	// key is New's.
	Old        zset.Row
	OldKeyOnly bool
	// New is the new row of an INSERT or UPDATE. Unchanged marks columns
	// PostgreSQL did not send because their TOASTed value did not change;
	// their value is the old row's. Unchanged is nil when every column
	// was sent.
	New       zset.Row
	Unchanged []bool
}

// Txn is one upstream transaction: its changes in commit order and the
// LSNs of its commit record.
type Txn struct {
	Xid       uint32
	CommitLSN pglogrepl.LSN
	// EndLSN is the end of the commit record: the position the source
	// records as its progress and acknowledges to the slot.
	EndLSN  pglogrepl.LSN
	Changes []Change
}

// Decoder turns the pgoutput messages of one replication stream into
// transactions. It knows the tables the source replicates; a Relation
// message for one of them is checked against its columns, and messages
// for any other table are ignored. A Decoder is not safe for concurrent
// use.
type Decoder struct {
	tables []Table
	byName map[string]int // "schema.name" -> position
	// byRel maps a relation OID to a table position, or -1 for a relation
	// the source does not replicate.
	byRel map[uint32]int
	cur   *Txn
}

// NewDecoder returns a decoder for tables.
func NewDecoder(tables []Table) *Decoder {
	d := &Decoder{tables: tables, byName: map[string]int{}, byRel: map[uint32]int{}}
	for i, t := range tables {
		d.byName[t.Schema+"."+t.Name] = i
	}
	return d
}

// Tables returns the tables the decoder was created with.
func (d *Decoder) Tables() []Table { return d.tables }

// InTxn reports whether a transaction has begun and not yet committed.
func (d *Decoder) InTxn() bool { return d.cur != nil }

// Decode consumes one pgoutput message (the WAL data of an XLogData
// message). It returns the transaction a Commit message completes, or nil.
func (d *Decoder) Decode(data []byte) (*Txn, error) {
	msg, err := pglogrepl.ParseV2(data, false)
	if err != nil {
		return nil, fmt.Errorf("decoding pgoutput message: %w", err)
	}
	switch m := msg.(type) {
	case *pglogrepl.BeginMessage:
		if d.cur != nil {
			return nil, fmt.Errorf("pgoutput: BEGIN of transaction %d inside transaction %d", m.Xid, d.cur.Xid)
		}
		d.cur = &Txn{Xid: m.Xid}
	case *pglogrepl.CommitMessage:
		if d.cur == nil {
			return nil, fmt.Errorf("pgoutput: COMMIT at %s outside a transaction", m.CommitLSN)
		}
		txn := d.cur
		d.cur = nil
		txn.CommitLSN, txn.EndLSN = m.CommitLSN, m.TransactionEndLSN
		return txn, nil
	case *pglogrepl.RelationMessageV2:
		return nil, d.relation(&m.RelationMessage)
	case *pglogrepl.InsertMessageV2:
		return nil, d.insert(&m.InsertMessage)
	case *pglogrepl.UpdateMessageV2:
		return nil, d.update(&m.UpdateMessage)
	case *pglogrepl.DeleteMessageV2:
		return nil, d.delete(&m.DeleteMessage)
	case *pglogrepl.TruncateMessageV2:
		return nil, d.truncate(&m.TruncateMessage)
	case *pglogrepl.TypeMessageV2, *pglogrepl.OriginMessage, *pglogrepl.LogicalDecodingMessageV2:
		// Types are known by OID; origins and logical messages carry no rows.
	default:
		return nil, fmt.Errorf("pgoutput: unexpected %s message", msg.Type())
	}
	return nil, nil
}

func (d *Decoder) relation(m *pglogrepl.RelationMessage) error {
	i, ok := d.byName[m.Namespace+"."+m.RelationName]
	if !ok {
		d.byRel[m.RelationID] = -1
		return nil
	}
	cols := make([]relationColumn, len(m.Columns))
	for j, c := range m.Columns {
		cols[j] = relationColumn{Name: c.Name, OID: c.DataType, TypMod: c.TypeModifier}
	}
	if err := checkRelation(&d.tables[i], cols); err != nil {
		return err
	}
	d.byRel[m.RelationID] = i
	return nil
}

// table returns the position of the relation a row message names, or -1
// when the source does not replicate it.
func (d *Decoder) table(rel uint32, what string) (int, error) {
	if d.cur == nil {
		return 0, fmt.Errorf("pgoutput: %s outside a transaction", what)
	}
	i, ok := d.byRel[rel]
	if !ok {
		return 0, fmt.Errorf("pgoutput: %s for relation %d before its Relation message", what, rel)
	}
	return i, nil
}

func (d *Decoder) insert(m *pglogrepl.InsertMessage) error {
	i, err := d.table(m.RelationID, "INSERT")
	if err != nil || i < 0 {
		return err
	}
	row, unchanged, err := d.row(i, m.Tuple)
	if err != nil {
		return err
	}
	if unchanged != nil {
		return fmt.Errorf("pgoutput: INSERT into %s with an unchanged TOAST column", d.tables[i].QualifiedName())
	}
	d.cur.Changes = append(d.cur.Changes, Change{Table: i, Kind: Insert, New: row})
	return nil
}

func (d *Decoder) update(m *pglogrepl.UpdateMessage) error {
	i, err := d.table(m.RelationID, "UPDATE")
	if err != nil || i < 0 {
		return err
	}
	c := Change{Table: i, Kind: Update}
	if m.OldTuple != nil {
		old, unchanged, err := d.row(i, m.OldTuple)
		if err != nil {
			return err
		}
		if unchanged != nil {
			return fmt.Errorf("pgoutput: UPDATE of %s with an unchanged TOAST column in the old tuple", d.tables[i].QualifiedName())
		}
		c.Old, c.OldKeyOnly = old, m.OldTupleType == pglogrepl.UpdateMessageTupleTypeKey
	}
	c.New, c.Unchanged, err = d.row(i, m.NewTuple)
	if err != nil {
		return err
	}
	d.cur.Changes = append(d.cur.Changes, c)
	return nil
}

func (d *Decoder) delete(m *pglogrepl.DeleteMessage) error {
	i, err := d.table(m.RelationID, "DELETE")
	if err != nil || i < 0 {
		return err
	}
	if m.OldTuple == nil {
		return fmt.Errorf("pgoutput: DELETE from %s without an old tuple (REPLICA IDENTITY NOTHING)", d.tables[i].QualifiedName())
	}
	old, unchanged, err := d.row(i, m.OldTuple)
	if err != nil {
		return err
	}
	if unchanged != nil {
		return fmt.Errorf("pgoutput: DELETE from %s with an unchanged TOAST column in the old tuple", d.tables[i].QualifiedName())
	}
	d.cur.Changes = append(d.cur.Changes, Change{Table: i, Kind: Delete, Old: old, OldKeyOnly: m.OldTupleType == pglogrepl.DeleteMessageTupleTypeKey})
	return nil
}

func (d *Decoder) truncate(m *pglogrepl.TruncateMessage) error {
	for _, rel := range m.RelationIDs {
		i, err := d.table(rel, "TRUNCATE")
		if err != nil {
			return err
		}
		if i >= 0 {
			d.cur.Changes = append(d.cur.Changes, Change{Table: i, Kind: Truncate})
		}
	}
	return nil
}

// row parses a tuple of table i. Columns PostgreSQL left out as unchanged
// TOAST values are NULL in the row and marked in unchanged.
func (d *Decoder) row(i int, tup *pglogrepl.TupleData) (zset.Row, []bool, error) {
	t := &d.tables[i]
	if tup == nil {
		return nil, nil, fmt.Errorf("pgoutput: missing tuple for %s", t.QualifiedName())
	}
	if len(tup.Columns) != len(t.Columns) {
		return nil, nil, &SchemaChangeError{Table: t.Schema + "." + t.Name, Change: fmt.Sprintf("a row has %d columns, the table %d", len(tup.Columns), len(t.Columns))}
	}
	row := make(zset.Row, len(t.Columns))
	var unchanged []bool
	for j, c := range tup.Columns {
		switch c.DataType {
		case pglogrepl.TupleDataTypeNull:
			row[j] = types.Null
		case pglogrepl.TupleDataTypeToast:
			if unchanged == nil {
				unchanged = make([]bool, len(t.Columns))
			}
			unchanged[j] = true
			row[j] = types.Null
		case pglogrepl.TupleDataTypeText:
			v, err := ParseValue(t, j, string(c.Data))
			if err != nil {
				return nil, nil, err
			}
			row[j] = v
		default:
			return nil, nil, fmt.Errorf("pgoutput: column %q of %s arrived in binary format", t.Columns[j].Name, t.QualifiedName())
		}
	}
	return row, unchanged, nil
}

// ParseValue parses the text of column j of t as PostgreSQL sent it.
func ParseValue(t *Table, j int, text string) (types.Value, error) {
	v, err := types.Parse(t.Columns[j].Type, text)
	if err != nil {
		return types.Null, fmt.Errorf("column %q of %s: value %q: %w", t.Columns[j].Name, t.QualifiedName(), text, err)
	}
	return v, nil
}
