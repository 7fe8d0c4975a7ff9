package lake

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"unsafe"

	"github.com/rockstream/rockstream/internal/storage"
)

// A row payload (record kind recRow, docs/format/lake.md):
//
//	ncols uvarint, then per column: type byte (0 = NULL), then the value:
//	fixed 8 bytes for integers, booleans, timestamps, tids and floats
//	(IEEE bits); uvarint length and bytes for text, bytea and uuid.
func encodeRow(vals []Value) []byte {
	b := binary.AppendUvarint(nil, uint64(len(vals)))
	for _, v := range vals {
		if v.Null {
			b = append(b, 0)
			continue
		}
		b = append(b, byte(v.T))
		switch v.T {
		case TFloat4, TFloat8:
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(v.F))
		case TText, TVarchar, TBytea, TUUID, TName, TChar:
			b = binary.AppendUvarint(b, uint64(len(v.S)))
			b = append(b, v.S...)
		default:
			b = binary.BigEndian.AppendUint64(b, uint64(v.I))
		}
	}
	return storage.EncodeRecord(recRow, formatVersion, b)
}

// decodeRow checks a stored row's envelope and decodes it against the
// table's columns; any mismatch is corruption.
func decodeRow(rec []byte, cols []Column) ([]Value, error) {
	vals := make([]Value, len(cols))
	return vals, decodeRowInto(rec, cols, nil, vals)
}

// decodeRowInto is decodeRow into dst, materializing only the columns
// need marks (all when need is nil); the whole record is still checked.
func decodeRowInto(rec []byte, cols []Column, need []bool, dst []Value) error {
	return decodeRowAlias(rec, cols, need, dst, false)
}

// decodeRowAlias is decodeRowInto; with alias the text values point into
// rec instead of being copied, for a caller done with them before rec
// changes.
func decodeRowAlias(rec []byte, cols []Column, need []bool, dst []Value, alias bool) error {
	kind, version, p, err := storage.DecodeRecord(rec)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupted, err)
	}
	if kind != recRow || version != formatVersion {
		return fmt.Errorf("%w: row record of kind %d version %d", ErrCorrupted, kind, version)
	}
	bad := func(what string) error { return fmt.Errorf("%w: row payload %s", ErrCorrupted, what) }
	n, w := binary.Uvarint(p)
	if w <= 0 || n != uint64(len(cols)) {
		return bad(fmt.Sprintf("has %d columns, the table %d", n, len(cols)))
	}
	p = p[w:]
	for i, c := range cols {
		want := need == nil || need[i]
		if len(p) < 1 {
			return bad("is truncated")
		}
		t := Type(p[0])
		p = p[1:]
		if t == 0 {
			dst[i] = nullOf(c.Type)
			continue
		}
		if t != c.Type {
			return bad(fmt.Sprintf("has type %d for column %s of type %s", t, c.Name, c.Type))
		}
		switch t {
		case TFloat4, TFloat8:
			if len(p) < 8 {
				return bad("is truncated")
			}
			if want {
				dst[i] = Value{T: t, F: math.Float64frombits(binary.BigEndian.Uint64(p))}
			}
			p = p[8:]
		case TText, TVarchar, TBytea, TUUID, TName, TChar:
			l, w := binary.Uvarint(p)
			if w <= 0 || uint64(len(p)-w) < l {
				return bad("is truncated")
			}
			if want {
				b := p[w : w+int(l)]
				if alias && len(b) > 0 {
					dst[i] = textOf(t, unsafe.String(&b[0], len(b)))
				} else {
					dst[i] = textOf(t, string(b))
				}
			}
			p = p[w+int(l):]
		default:
			if len(p) < 8 {
				return bad("is truncated")
			}
			if want {
				dst[i] = intOf(t, int64(binary.BigEndian.Uint64(p)))
			}
			p = p[8:]
		}
	}
	if len(p) != 0 {
		return bad("has trailing bytes")
	}
	return nil
}

// storedTable is a table definition's payload (record kind recTable):
// JSON, as the definitions are small and rarely read.
type storedTable struct {
	Schema string         `json:"schema"`
	Name   string         `json:"name"`
	Cols   []storedColumn `json:"cols"`
	PK     []int          `json:"pk,omitempty"`
}

type storedColumn struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	NotNull bool   `json:"not_null,omitempty"`
}

func encodeTable(t *Table) []byte {
	st := storedTable{Schema: t.Schema, Name: t.Name, PK: t.PK}
	for _, c := range t.Cols {
		st.Cols = append(st.Cols, storedColumn{Name: c.Name, Type: c.Type.String(), NotNull: c.NotNull})
	}
	b, _ := json.Marshal(st)
	return storage.EncodeRecord(recTable, formatVersion, b)
}

func decodeTable(oid uint32, rec []byte) (*Table, error) {
	kind, version, p, err := storage.DecodeRecord(rec)
	if err != nil {
		return nil, fmt.Errorf("%w: table %d: %v", ErrCorrupted, oid, err)
	}
	if kind != recTable || version != formatVersion {
		return nil, fmt.Errorf("%w: table %d: record of kind %d version %d", ErrCorrupted, oid, kind, version)
	}
	var st storedTable
	if err := json.Unmarshal(p, &st); err != nil {
		return nil, fmt.Errorf("%w: table %d: %v", ErrCorrupted, oid, err)
	}
	t := &Table{OID: oid, Schema: st.Schema, Name: st.Name, PK: st.PK}
	for _, c := range st.Cols {
		typ, ok := typeFromName(c.Type)
		if !ok {
			return nil, fmt.Errorf("%w: table %d: unknown column type %q", ErrCorrupted, oid, c.Type)
		}
		t.Cols = append(t.Cols, Column{Name: c.Name, Type: typ, NotNull: c.NotNull})
	}
	return t, nil
}

func encodeUint(v uint64) []byte {
	return storage.EncodeRecord(recMeta, formatVersion, binary.BigEndian.AppendUint64(nil, v))
}

func decodeUint(what string, rec []byte) (uint64, error) {
	kind, version, p, err := storage.DecodeRecord(rec)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrCorrupted, what, err)
	}
	if kind != recMeta || version != formatVersion || len(p) != 8 {
		return 0, fmt.Errorf("%w: %s: record of kind %d version %d, %d bytes", ErrCorrupted, what, kind, version, len(p))
	}
	return binary.BigEndian.Uint64(p), nil
}

// pkEntry is the value of a primary key index entry: the row version
// holding the key.
func encodePKEntry(tid int64, begin uint64) []byte {
	p := binary.BigEndian.AppendUint64(nil, uint64(tid))
	p = binary.BigEndian.AppendUint64(p, begin)
	return storage.EncodeRecord(recPK, formatVersion, p)
}

func decodePKEntry(rec []byte) (int64, uint64, error) {
	kind, version, p, err := storage.DecodeRecord(rec)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: primary key entry: %v", ErrCorrupted, err)
	}
	if kind != recPK || version != formatVersion || len(p) != 16 {
		return 0, 0, fmt.Errorf("%w: primary key entry of kind %d version %d", ErrCorrupted, kind, version)
	}
	return int64(binary.BigEndian.Uint64(p)), binary.BigEndian.Uint64(p[8:]), nil
}
