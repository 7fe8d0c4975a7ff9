package split

import (
	"reflect"
	"testing"
)

func TestStatementsKeepOffsets(t *testing.T) {
	script := "SELECT 1;\n  -- c\n/* k */ SELECT 'a;b' ;SELECT 3  "
	got := Statements(script)
	want := []Statement{{"SELECT 1;", 0}, {"/* k */ SELECT 'a;b' ;", 17}, {"SELECT 3", 39}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
	for _, st := range got {
		if script[st.Offset:st.Offset+len(st.Text)] != st.Text {
			t.Errorf("offset %d does not locate %q", st.Offset, st.Text)
		}
	}
	if got := Statements("  SELECT 'open"); !reflect.DeepEqual(got, []Statement{{"SELECT 'open", 2}}) {
		t.Errorf("unterminated: %#v", got)
	}
}
