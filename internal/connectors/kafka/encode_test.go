package kafka

import (
	"encoding/json"
	"testing"

	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TestAppendRowJSONB: a sink writes a jsonb value as the JSON it holds,
// not as a string of its text, and the record is valid JSON.
func TestAppendRowJSONB(t *testing.T) {
	cols := []runtime.Column{{Name: "id", Type: types.Of(types.Int4)}, {Name: "doc", Type: types.Of(types.Jsonb)}}
	for text, want := range map[string]string{
		`{"b": [1, 2.50], "a": "x"}`: `{"id":1,"doc":{"a": "x", "b": [1, 2.50]}}`,
		`"hello"`:                    `{"id":1,"doc":"hello"}`,
		`null`:                       `{"id":1,"doc":null}`,
	} {
		doc, err := types.Parse(types.Of(types.Jsonb), text)
		if err != nil {
			t.Fatal(err)
		}
		got := string(appendRow(nil, cols, zset.Row{types.MakeInt(types.Int4, 1), doc}))
		if got != want {
			t.Errorf("%s: got %s, want %s", text, got, want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: %s is not valid JSON", text, got)
		}
	}
}
