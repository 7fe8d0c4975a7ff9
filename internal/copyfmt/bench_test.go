package copyfmt

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/rockstream/rockstream/internal/types"
)

var benchCols = []Column{
	{"id", types.Of(types.Int8)}, {"name", types.Of(types.Text)},
	{"price", types.Of(types.Numeric)}, {"at", types.Of(types.TimestampTZ)},
}

func benchRows(n int) [][]types.Value {
	rows := make([][]types.Value, n)
	for i := range rows {
		price, _ := types.Parse(types.Of(types.Numeric), fmt.Sprintf("%d.%02d", i, i%100))
		at, _ := types.Parse(types.Of(types.TimestampTZ), "2026-11-30 01:02:03.456+00")
		rows[i] = []types.Value{types.MakeInt(types.Int8, int64(i)), types.MakeText(fmt.Sprintf("item\t%d, \"quoted\"", i)), price, at}
	}
	return rows
}

func BenchmarkEncode(b *testing.B) {
	rows := benchRows(1000)
	for _, f := range []Format{Text, CSV, Binary} {
		b.Run(f.String(), func(b *testing.B) {
			opts := Options{Format: f}
			if err := opts.Normalize(false); err != nil {
				b.Fatal(err)
			}
			enc := NewEncoder(opts, benchCols)
			var buf []byte
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				buf = enc.AppendHeader(buf[:0])
				for _, r := range rows {
					var err error
					if buf, err = enc.AppendRow(buf, r); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	rows := benchRows(1000)
	for _, f := range []Format{Text, CSV, Binary} {
		b.Run(f.String(), func(b *testing.B) {
			opts := Options{Format: f}
			if err := opts.Normalize(true); err != nil {
				b.Fatal(err)
			}
			enc := NewEncoder(opts, benchCols)
			data := enc.AppendHeader(nil)
			for _, r := range rows {
				data, _ = enc.AppendRow(data, r)
			}
			data = enc.AppendTrailer(data)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				dec := NewDecoder(bytes.NewReader(data), opts, "t", benchCols)
				for {
					if _, err := dec.Next(); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
