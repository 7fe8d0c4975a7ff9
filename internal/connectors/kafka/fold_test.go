package kafka

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// foldDebezium applies a Debezium sink's records, keyed, in topic order
// and returns the rows left as the harness prints a query's rows (cols in
// order, lines sorted). It fails at the first record that shows a change
// delivered twice or lost: a create or snapshot read of a key that is
// present, an update or delete whose before is not the key's current row.
func foldDebezium(recs []*kgo.Record, cols []string) (string, error) {
	type row = map[string]any
	cur := map[string]row{}
	for _, r := range recs {
		var ev struct {
			Before, After row
			Op            string
		}
		dec := json.NewDecoder(bytes.NewReader(r.Value))
		dec.UseNumber()
		if err := dec.Decode(&ev); err != nil {
			return "", fmt.Errorf("record %d: %v", r.Offset, err)
		}
		k := string(r.Key)
		old, present := cur[k]
		switch ev.Op {
		case "r", "c":
			if present {
				return "", fmt.Errorf("op %s for key %s which is present: %s", ev.Op, k, r.Value)
			}
			cur[k] = ev.After
		case "u", "d":
			if !present || !reflect.DeepEqual(old, ev.Before) {
				return "", fmt.Errorf("op %s for key %s whose before is not the current row %v: %s", ev.Op, k, old, r.Value)
			}
			if ev.Op == "u" {
				cur[k] = ev.After
			} else {
				delete(cur, k)
			}
		default:
			return "", fmt.Errorf("record %d has op %q", r.Offset, ev.Op)
		}
	}
	var lines []string
	for _, r := range cur {
		f := make([]string, len(cols))
		for i, c := range cols {
			switch v := r[c].(type) {
			case nil:
				f[i] = "NULL"
			case bool:
				f[i] = map[bool]string{true: "t", false: "f"}[v]
			default:
				f[i] = fmt.Sprint(v)
			}
		}
		lines = append(lines, strings.Join(f, ","))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n"), nil
}
