package kafka

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// A decoder turns one record's value into row changes of its table. It is
// pure: values stay text (or NULL) and the engine parses them with the
// columns' types, so that '1.50' reaches a numeric column exactly as
// COPY would read it.
type decoder struct {
	format string
	table  string
	cols   []runtime.Column
	// keyed says the table has a primary key: JSON and CSV records upsert
	// and Debezium deletes go by key.
	keyed bool
	// index maps a column name to its position.
	index map[string]int
}

func newDecoder(format, table string, cols []runtime.Column, pk []int) *decoder {
	d := &decoder{format: format, table: table, cols: cols, keyed: len(pk) > 0, index: map[string]int{}}
	for i, c := range cols {
		d.index[c.Name] = i
	}
	return d
}

// decode appends the changes a record's value makes. A nil value (a
// tombstone) makes none.
func (d *decoder) decode(dst []runtime.RowChange, value []byte, origin runtime.Origin) ([]runtime.RowChange, error) {
	if value == nil {
		return dst, nil
	}
	switch d.format {
	case "csv":
		row, err := d.csvRow(value)
		if err != nil {
			return dst, err
		}
		return append(dst, d.change(d.insertOp(), row, origin)), nil
	case "debezium":
		return d.debezium(dst, value, origin)
	}
	row, absent, err := d.jsonRow(value)
	if err != nil {
		return dst, err
	}
	c := d.change(d.insertOp(), row, origin)
	c.Absent = absent
	return append(dst, c), nil
}

func (d *decoder) insertOp() runtime.ChangeOp {
	if d.keyed {
		return runtime.Upsert
	}
	return runtime.Insert
}

func (d *decoder) change(op runtime.ChangeOp, row zset.Row, origin runtime.Origin) runtime.RowChange {
	return runtime.RowChange{Table: d.table, Op: op, Row: row, Origin: origin}
}

// jsonRow maps a JSON object's fields to the columns by name: JSON null
// is NULL, fields that name no column are ignored, and absent marks the
// columns no field names (nil when every column has one), which take
// their DEFAULT as in an INSERT that leaves them out.
func (d *decoder) jsonRow(value []byte) (row zset.Row, absent []bool, err error) {
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(value))
	if err := dec.Decode(&obj); err != nil {
		return nil, nil, fmt.Errorf("the value is not a JSON object: %v", err)
	}
	if obj == nil {
		return nil, nil, fmt.Errorf("the value is JSON null, not an object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("the value has data after its JSON object")
	}
	return d.objectRow(obj)
}

// objectRow maps an object's fields to the columns by name; absent marks
// the columns no field names, nil when there are none.
func (d *decoder) objectRow(obj map[string]json.RawMessage) (row zset.Row, absent []bool, err error) {
	row = make(zset.Row, len(d.cols))
	given := 0
	for k, raw := range obj {
		i, ok := d.index[k]
		if !ok {
			continue
		}
		v, err := jsonValue(raw, d.cols[i].Type)
		if err != nil {
			return nil, nil, fmt.Errorf("field %q: %v", k, err)
		}
		row[i] = v
		given++
	}
	if given < len(d.cols) {
		absent = make([]bool, len(d.cols))
		for i, c := range d.cols {
			_, ok := obj[c.Name]
			absent[i] = !ok
		}
	}
	return row, absent, nil
}

// jsonValue gives a JSON value as the text a column of type t parses: a
// string's contents, a number or boolean as written, an object or array as
// JSON text; for a jsonb column, any value but null as JSON text, so that
// a string stays a JSON string.
func jsonValue(raw json.RawMessage, t types.Type) (types.Value, error) {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "null":
		return types.Null, nil
	case t.ID == types.Jsonb:
		return types.MakeText(s), nil
	case strings.HasPrefix(s, `"`):
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return types.Null, err
		}
		return types.MakeText(str), nil
	}
	return types.MakeText(s), nil
}

// csvRow reads one CSV line whose fields are the columns in table order;
// an empty field is NULL.
func (d *decoder) csvRow(value []byte) (zset.Row, error) {
	r := csv.NewReader(bytes.NewReader(value))
	r.FieldsPerRecord = -1
	fields, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("the value is not a CSV line: %v", err)
	}
	if _, err := r.Read(); err != io.EOF {
		return nil, fmt.Errorf("the value holds more than one CSV line")
	}
	if len(fields) != len(d.cols) {
		return nil, fmt.Errorf("the CSV line has %d fields, table %s has %d columns", len(fields), d.table, len(d.cols))
	}
	row := make(zset.Row, len(fields))
	for i, f := range fields {
		if f == "" {
			row[i] = types.Null
		} else {
			row[i] = types.MakeText(f)
		}
	}
	return row, nil
}

// debeziumEnvelope is a Debezium change event, with or without the
// schema/payload wrapper.
type debeziumEnvelope struct {
	Before  map[string]json.RawMessage `json:"before"`
	After   map[string]json.RawMessage `json:"after"`
	Op      string                     `json:"op"`
	Payload *debeziumEnvelope          `json:"payload"`
}

// debezium turns a change event into changes: c and r insert after, u
// deletes before and inserts after, d deletes before. On a table with a
// primary key, inserts are upserts and deletes go by key, so that a
// replayed snapshot (op r) does not collide with what it already wrote.
func (d *decoder) debezium(dst []runtime.RowChange, value []byte, origin runtime.Origin) ([]runtime.RowChange, error) {
	var ev debeziumEnvelope
	if err := json.Unmarshal(value, &ev); err != nil {
		return dst, fmt.Errorf("the value is not a Debezium JSON event: %v", err)
	}
	if ev.Payload != nil && ev.Op == "" {
		ev = *ev.Payload
	}
	del := runtime.Delete
	if d.keyed {
		del = runtime.DeleteKey
	}
	side := func(which string, obj map[string]json.RawMessage) (zset.Row, error) {
		if obj == nil {
			return nil, fmt.Errorf("the Debezium event with op %q has no %q", ev.Op, which)
		}
		// A Debezium row image carries every column: one it leaves out
		// is NULL, not the column's default.
		row, _, err := d.objectRow(obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", which, err)
		}
		return row, nil
	}
	switch ev.Op {
	case "c", "r":
		after, err := side("after", ev.After)
		if err != nil {
			return dst, err
		}
		return append(dst, d.change(d.insertOp(), after, origin)), nil
	case "u":
		after, err := side("after", ev.After)
		if err != nil {
			return dst, err
		}
		if ev.Before != nil {
			before, err := side("before", ev.Before)
			if err != nil {
				return dst, err
			}
			dst = append(dst, d.change(del, before, origin))
		} else if !d.keyed {
			return dst, fmt.Errorf("the Debezium update has no \"before\" and table %s has no primary key to replace by", d.table)
		}
		return append(dst, d.change(d.insertOp(), after, origin)), nil
	case "d":
		before, err := side("before", ev.Before)
		if err != nil {
			return dst, err
		}
		return append(dst, d.change(del, before, origin)), nil
	}
	return dst, fmt.Errorf("the Debezium event has op %q; want c, r, u or d", ev.Op)
}
