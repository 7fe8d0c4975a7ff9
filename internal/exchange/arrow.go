package exchange

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// The metadata keys of the Arrow schema (docs/format/exchange.md).
const (
	metaFormat   = "rockstream.exchange" // on the schema: the format version
	metaKind     = "rockstream.kind"     // on a column: the values' types.Kind
	metaEncoding = "rockstream.encoding" // on a column: "row" for row-encoded cells
	weightName   = "weight"
)

// kindMixed is the kind of a column whose values are of several kinds; it
// is row-encoded, each cell naming its own kind.
const kindMixed = types.KindNull

// column is how one SQL column travels: the kind of its values and the
// Arrow type that carries them.
type column struct {
	kind types.Kind
	// all-NULL columns are Arrow's null type; rowEncoded columns carry
	// each value's zset row encoding in a binary cell.
	allNull    bool
	rowEncoded bool
	typ        arrow.DataType
}

// exactType returns the Arrow type that holds every value of kind k
// exactly, or nil when there is none and the column is row-encoded.
func exactType(k types.Kind) arrow.DataType {
	switch k {
	case types.Bool:
		return arrow.FixedWidthTypes.Boolean
	case types.Int2:
		return arrow.PrimitiveTypes.Int16
	case types.Int4:
		return arrow.PrimitiveTypes.Int32
	case types.Int8:
		return arrow.PrimitiveTypes.Int64
	case types.Float4:
		return arrow.PrimitiveTypes.Float32
	case types.Float8:
		return arrow.PrimitiveTypes.Float64
	case types.Text:
		return arrow.BinaryTypes.String
	case types.Bytea:
		return arrow.BinaryTypes.Binary
	case types.Date:
		return arrow.FixedWidthTypes.Date32
	case types.Timestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case types.TimestampTZ:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	case types.Time:
		return arrow.FixedWidthTypes.Time64us
	}
	return nil
}

// columnOf returns the layout of a column whose non-NULL values have kind
// k (kindMixed: several kinds), allNull when it has none.
func columnOf(k types.Kind, allNull bool) column {
	if allNull {
		return column{kind: types.KindNull, allNull: true, typ: arrow.Null}
	}
	if t := exactType(k); t != nil && k != kindMixed {
		return column{kind: k, typ: t}
	}
	return column{kind: k, rowEncoded: true, typ: arrow.BinaryTypes.Binary}
}

// layoutOf infers the columns of b from its values: a column's kind is
// that of its non-NULL values. Every row must have the same width.
func layoutOf(b zset.Batch) ([]column, error) {
	if len(b) == 0 {
		return nil, nil
	}
	width := len(b[0].Row)
	kinds := make([]types.Kind, width)
	seen := make([]bool, width)
	for _, e := range b {
		if len(e.Row) != width {
			return nil, errs.Newf(errs.Internal, "exchange: a batch mixes rows of %d and %d columns", width, len(e.Row))
		}
		for j, v := range e.Row {
			switch {
			case v.IsNull():
			case !seen[j]:
				kinds[j], seen[j] = v.Kind(), true
			case kinds[j] != v.Kind():
				kinds[j] = kindMixed
			}
		}
	}
	cols := make([]column, width)
	for j := range cols {
		cols[j] = columnOf(kinds[j], !seen[j])
	}
	return cols, nil
}

// schemaOf returns the Arrow schema of cols: one field per column, c0,
// c1, ..., then the weight.
func schemaOf(cols []column) *arrow.Schema {
	fields := make([]arrow.Field, 0, len(cols)+1)
	for j, c := range cols {
		md := map[string]string{metaKind: strconv.Itoa(int(c.kind))}
		if c.rowEncoded {
			md[metaEncoding] = "row"
		}
		fields = append(fields, arrow.Field{
			Name: "c" + strconv.Itoa(j), Type: c.typ, Nullable: true,
			Metadata: arrow.MetadataFrom(md),
		})
	}
	fields = append(fields, arrow.Field{Name: weightName, Type: arrow.PrimitiveTypes.Int64})
	md := arrow.NewMetadata([]string{metaFormat}, []string{strconv.Itoa(FormatVersion)})
	return arrow.NewSchema(fields, &md)
}

// recordOf builds the Arrow record batch of entries with columns cols.
// The caller releases it.
func recordOf(mem memory.Allocator, schema *arrow.Schema, cols []column, entries zset.Batch) (arrow.RecordBatch, error) {
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	rb.Reserve(len(entries))
	var cell []byte
	for j, c := range cols {
		var err error
		switch fb := rb.Field(j).(type) {
		case *array.NullBuilder:
			fb.AppendNulls(len(entries))
		case *array.BooleanBuilder:
			err = appendColumn(fb, entries, j, c.kind, func(v types.Value) { fb.Append(v.Bool()) })
		case *array.Int16Builder:
			err = appendColumn(fb, entries, j, c.kind, func(v types.Value) { fb.Append(int16(v.Int())) })
		case *array.Int32Builder:
			err = appendColumn(fb, entries, j, c.kind, func(v types.Value) { fb.Append(int32(v.Int())) })
		case *array.Int64Builder:
			err = appendColumn(fb, entries, j, c.kind, func(v types.Value) { fb.Append(v.Int()) })
		case *array.Float32Builder:
			err = appendColumn(fb, entries, j, c.kind, func(v types.Value) { fb.Append(float32(v.Float())) })
		case *array.Float64Builder:
			err = appendColumn(fb, entries, j, c.kind, func(v types.Value) { fb.Append(v.Float()) })
		case *array.StringBuilder:
			err = appendColumn(fb, entries, j, c.kind, func(v types.Value) { fb.Append(v.Str()) })
		case *array.Date32Builder:
			err = appendColumn(fb, entries, j, c.kind, func(v types.Value) { fb.Append(arrow.Date32(v.Days())) })
		case *array.TimestampBuilder:
			err = appendColumn(fb, entries, j, c.kind, func(v types.Value) { fb.Append(arrow.Timestamp(v.Micros())) })
		case *array.Time64Builder:
			err = appendColumn(fb, entries, j, c.kind, func(v types.Value) { fb.Append(arrow.Time64(v.Micros())) })
		case *array.BinaryBuilder:
			if !c.rowEncoded {
				err = appendColumn(fb, entries, j, c.kind, func(v types.Value) { fb.AppendString(v.Str()) })
				break
			}
			err = appendColumn(fb, entries, j, c.kind, func(v types.Value) {
				cell = zset.EncodeRow(cell[:0], zset.Row{v})
				fb.Append(cell)
			})
		default:
			err = errs.Newf(errs.Internal, "exchange: no builder for column %d of kind %d", j, c.kind)
		}
		if err != nil {
			return nil, err
		}
	}
	wb := rb.Field(len(cols)).(*array.Int64Builder)
	for _, e := range entries {
		wb.Append(e.Weight)
	}
	return rb.NewRecordBatch(), nil
}

// appendColumn appends value j of every entry to fb: NULL as an Arrow
// null, another value by add, after checking it is of the column's kind.
func appendColumn(fb interface{ AppendNull() }, entries zset.Batch, j int, k types.Kind, add func(types.Value)) error {
	for _, e := range entries {
		v := e.Row[j]
		switch {
		case v.IsNull():
			fb.AppendNull()
		case v.Kind() == k || k == kindMixed:
			add(v)
		default:
			return errs.Newf(errs.Internal, "exchange: column %d of kind %d holds a value of kind %d", j, k, v.Kind())
		}
	}
	return nil
}

// appendEntries decodes rec, whose columns are cols, onto dst.
func appendEntries(dst zset.Batch, rec arrow.RecordBatch, cols []column) (zset.Batch, error) {
	n := int(rec.NumRows())
	if int(rec.NumCols()) != len(cols)+1 {
		return dst, malformed("a record batch has %d columns, its schema %d", rec.NumCols(), len(cols)+1)
	}
	w := rec.Column(len(cols)).(*array.Int64)
	if w.NullN() > 0 {
		return dst, malformed("a record batch has NULL weights")
	}
	start := len(dst)
	vals := make([]types.Value, n*len(cols)) // one allocation for every row's values
	for i := range n {
		dst = append(dst, zset.Entry{Row: vals[i*len(cols) : (i+1)*len(cols) : (i+1)*len(cols)], Weight: w.Value(i)})
	}
	for j, c := range cols {
		if err := decodeColumn(dst[start:], j, c, rec.Column(j)); err != nil {
			return dst[:start], err
		}
	}
	return dst, nil
}

// decodeColumn sets value j of every entry from the Arrow array a.
func decodeColumn(entries zset.Batch, j int, c column, a arrow.Array) error {
	if a.Len() != len(entries) {
		return malformed("column %d has %d values for %d rows", j, a.Len(), len(entries))
	}
	if c.allNull {
		return nil // the values are NULL already
	}
	switch a := a.(type) {
	case *array.String:
		// One copy of the column's bytes, shared by its values.
		all := string(a.ValueBytes())
		offs := a.ValueOffsets()
		base := int(offs[0])
		for i := range entries {
			if a.IsValid(i) {
				lo, hi := int(offs[i])-base, int(offs[i+1])-base
				if lo < 0 || lo > hi || hi > len(all) {
					return malformed("column %d has bad offsets", j)
				}
				entries[i].Row[j] = types.MakeText(all[lo:hi])
			}
		}
		return nil
	case *array.Binary:
		var row zset.Row // one value's scratch row
		for i := range entries {
			if !a.IsValid(i) {
				continue
			}
			if !c.rowEncoded {
				entries[i].Row[j] = types.MakeBytea(a.Value(i))
				continue
			}
			var err error
			if row, err = zset.DecodeRowAppend(row[:0], a.Value(i)); err != nil {
				return fmt.Errorf("exchange: column %d row %d: %w", j, i, err)
			}
			if len(row) != 1 || row[0].IsNull() || (c.kind != kindMixed && row[0].Kind() != c.kind) {
				return malformed("column %d row %d is not one value of kind %d", j, i, c.kind)
			}
			entries[i].Row[j] = row[0]
		}
		return nil
	}
	for i := range entries {
		if !a.IsValid(i) {
			continue
		}
		v := exactValue(a, c.kind, i)
		if v.Kind() == types.Time && (v.Micros() < 0 || v.Micros() > maxTimeMicros) {
			return malformed("column %d row %d: time of day %d µs is out of range", j, i, v.Micros())
		}
		entries[i].Row[j] = v
	}
	return nil
}

// maxTimeMicros is 24:00:00, the largest time of day.
const maxTimeMicros = 86_400_000_000

// exactValue returns value i of a, an array of kind k's exact type.
func exactValue(a arrow.Array, k types.Kind, i int) types.Value {
	switch a := a.(type) {
	case *array.Boolean:
		return types.MakeBool(a.Value(i))
	case *array.Int16:
		return types.MakeInt(types.Int2, int64(a.Value(i)))
	case *array.Int32:
		return types.MakeInt(types.Int4, int64(a.Value(i)))
	case *array.Int64:
		return types.MakeInt(types.Int8, a.Value(i))
	case *array.Float32:
		return types.MakeFloat4(a.Value(i))
	case *array.Float64:
		return types.MakeFloat8(a.Value(i))
	case *array.Date32:
		return types.MakeDate(int32(a.Value(i)))
	case *array.Timestamp:
		if k == types.TimestampTZ {
			return types.MakeTimestampTZ(int64(a.Value(i)))
		}
		return types.MakeTimestamp(int64(a.Value(i)))
	case *array.Time64:
		return types.MakeTime(int64(a.Value(i)))
	}
	panic(fmt.Sprintf("exchange: no value of kind %d in an Arrow %s", k, a.DataType()))
}
