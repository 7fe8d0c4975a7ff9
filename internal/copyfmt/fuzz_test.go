package copyfmt

import (
	"bytes"
	"testing"

	"github.com/rockstream/rockstream/internal/types"
)

// FuzzDecode feeds arbitrary bytes to the decoders of every format with
// several option sets: they may fail, but never panic, and a row they
// return has one value per column.
func FuzzDecode(f *testing.F) {
	for _, tc := range goodInputs {
		f.Add([]byte(tc.data), uint8(0))
	}
	for _, tc := range badInputs {
		f.Add([]byte(tc.data), uint8(1))
	}
	// Zero with a huge exponent is zero, found slow here once.
	f.Add([]byte("1\tx\t0e999999999\n"), uint8(0))
	f.Add(append(appendBinaryHeader(nil), 0, 3, 0, 0, 0, 1, 'x', 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff), uint8(6))
	cols := []Column{{"a", types.Of(types.Int4)}, {"b", types.Of(types.Text)}, {"c", types.Of(types.Numeric)}}
	optionSets := []Options{
		{},
		{Header: HeaderMatch, Set: OptionSet{Header: true}},
		{Delimiter: '|', Null: "", Set: OptionSet{Delimiter: true, Null: true}},
		{Format: CSV},
		{Format: CSV, Header: HeaderLine, Escape: '\\', ForceNull: []bool{true, true, true}, Set: OptionSet{Header: true, Escape: true, ForceNull: true}},
		{Format: CSV, Quote: '\'', Null: "N", ForceNotNull: []bool{false, true, false}, Set: OptionSet{Quote: true, Null: true, ForceNotNull: true}},
		{Format: Binary},
	}
	for i := range optionSets {
		if err := optionSets[i].Normalize(true); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		opts := optionSets[int(which)%len(optionSets)]
		dec := NewDecoder(bytes.NewReader(data), opts, "t", cols)
		for i := 0; i < len(data)+2; i++ {
			row, err := dec.Next()
			if err != nil {
				return
			}
			if len(row) != len(cols) {
				t.Fatalf("row of %d values, want %d", len(row), len(cols))
			}
		}
		t.Fatal("the decoder returned more rows than the input has bytes")
	})
}
