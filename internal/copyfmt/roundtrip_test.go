package copyfmt

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/types"
)

// TestRoundTrip: for random rows and options, decoding the encoding gives
// the rows back, except where a format cannot tell a value from NULL (a
// text value equal to the NULL string in text format).
func TestRoundTrip(t *testing.T) {
	cols := []Column{{"t", types.Of(types.Text)}, {"i", types.Of(types.Int8)}, {"b", types.Of(types.Bytea)}, {"u", types.Of(types.Text)}}
	// Text drawn from the characters that matter to the formats.
	alphabet := []rune{'a', 'Z', '0', ' ', '\t', '\n', '\r', '\\', '"', '\'', ',', ';', '|', '.', 'N', 'é', '漢', '🎉', '\x01', '\x7f'}
	textGen := rapid.Custom(func(t *rapid.T) string {
		rs := rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 12).Draw(t, "runes")
		return string(rs)
	})
	rapid.Check(t, func(t *rapid.T) {
		opts := Options{Format: Format(rapid.IntRange(0, 2).Draw(t, "format"))}
		if opts.Format != Binary {
			opts.Delimiter, opts.Set.Delimiter = rapid.SampledFrom([]byte{'\t', ',', ';', '|'}).Draw(t, "delim"), true
			opts.Null, opts.Set.Null = rapid.SampledFrom([]string{"", `\N`, "NULL", "n/a"}).Draw(t, "null"), true
			if rapid.Bool().Draw(t, "header") {
				opts.Header, opts.Set.Header = HeaderLine, true
			}
		}
		if opts.Format == CSV {
			opts.Quote, opts.Set.Quote = rapid.SampledFrom([]byte{'"', '\''}).Draw(t, "quote"), true
			opts.Escape, opts.Set.Escape = rapid.SampledFrom([]byte{opts.Quote, '\\', '!'}).Draw(t, "escape"), true
			opts.ForceQuoteAll, opts.Set.ForceQuote = rapid.Bool().Draw(t, "forcequote"), true
		}
		out := opts
		if err := out.Normalize(false); err != nil {
			t.Skip(err)
		}
		in := opts
		in.ForceQuoteAll, in.Set.ForceQuote = false, false
		if err := in.Normalize(true); err != nil {
			t.Skip(err)
		}
		rows := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) []types.Value {
			row := make([]types.Value, len(cols))
			for i, c := range cols {
				if rapid.IntRange(0, 5).Draw(t, "null?") == 0 {
					row[i] = types.Null
					continue
				}
				switch c.Type.ID {
				case types.Text:
					row[i] = types.MakeText(textGen.Draw(t, "text"))
				case types.Int8:
					row[i] = types.MakeInt(types.Int8, rapid.Int64().Draw(t, "int"))
				case types.Bytea:
					v, _ := types.Parse(c.Type, `\x`+string(rapid.SliceOfN(rapid.SampledFrom([]byte("0123456789abcdef")), 0, 4).Draw(t, "hex"))+"00")
					row[i] = v
				}
			}
			return row
		}), 0, 6).Draw(t, "rows")
		enc := NewEncoder(out, cols)
		data := enc.AppendHeader(nil)
		for _, r := range rows {
			var err error
			if data, err = enc.AppendRow(data, r); err != nil {
				t.Fatal(err)
			}
		}
		data = enc.AppendTrailer(data)
		if in.Header == HeaderLine {
			in.Header = HeaderMatch
		}
		got, err := decodeAll(in, "t", cols, data)
		if err != nil {
			t.Fatalf("decoding %q: %v", data, err)
		}
		// In text, a value whose escaped form is the NULL string reads
		// back as NULL, as in PostgreSQL. (CSV quotes such a value.)
		want := make([][]types.Value, len(rows))
		for i, r := range rows {
			want[i] = append([]types.Value(nil), r...)
			for j, v := range r {
				if in.Format == Text && !v.IsNull() && string(enc.appendText(nil, []byte(types.Format(v, cols[j].Type)))) == in.Null {
					want[i][j] = types.Null
				}
			}
		}
		if err := sameRows(got, want); err != nil {
			t.Fatalf("%v\ndata %q", err, data)
		}
	})
}
