package runtime

import (
	"strings"

	"github.com/rockstream/rockstream/internal/types"
)

// RowsText is the result's rows as text, one line per row with the
// values as PostgreSQL's text output prints them, separated by '|', and
// NULL for a null: the form tests compare results in.
func (r *Result) RowsText() string {
	var b strings.Builder
	for _, row := range r.Rows {
		for i, v := range row {
			if i > 0 {
				b.WriteByte('|')
			}
			if v.IsNull() {
				b.WriteString("NULL")
			} else {
				b.WriteString(types.Format(v, r.Columns[i].Type))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}
