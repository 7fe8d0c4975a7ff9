package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream"
)

// The demo's view, and the same query run as an ad-hoc batch SELECT: after
// every step the two must agree, which is RockStream's central promise.
const (
	demoViewQuery = `SELECT store_id, SUM(amount) AS total_amount, COUNT(*) AS orders
FROM orders
GROUP BY store_id`
	demoReadView = `SELECT store_id, total_amount, orders FROM sales_by_store`
)

// demoStep is one statement of the demo, what it shows, and the contents of
// sales_by_store the demo expects after it, as (store_id, total_amount,
// orders) rows in store_id order.
type demoStep struct {
	title string
	stmt  string
	want  [][3]string
}

var demoSteps = []demoStep{
	{
		title: "Create a table of orders.",
		stmt:  "CREATE TABLE orders (order_id bigint, store_id bigint, amount bigint)",
	},
	{
		title: "Define a materialized view of sales per store. RockStream compiles its\nquery into a dataflow that maintains the result as orders change.",
		stmt:  "CREATE MATERIALIZED VIEW sales_by_store AS\n" + demoViewQuery,
		want:  [][3]string{},
	},
	{
		title: "Insert three orders: stores 1 and 2 appear in the view.",
		stmt:  "INSERT INTO orders VALUES (1, 1, 100), (2, 1, 250), (3, 2, 75)",
		want:  [][3]string{{"1", "350", "2"}, {"2", "75", "1"}},
	},
	{
		title: "Insert two more: store 2's row is replaced, store 3 appears.",
		stmt:  "INSERT INTO orders VALUES (4, 2, 125), (5, 3, 60)",
		want:  [][3]string{{"1", "350", "2"}, {"2", "200", "2"}, {"3", "60", "1"}},
	},
	{
		title: "Move order 2 from store 1 to store 2: one UPDATE changes two groups.",
		stmt:  "UPDATE orders SET store_id = 2 WHERE order_id = 2",
		want:  [][3]string{{"1", "100", "1"}, {"2", "450", "3"}, {"3", "60", "1"}},
	},
	{
		title: "Delete store 3's only order: its group leaves the view.",
		stmt:  "DELETE FROM orders WHERE order_id = 5",
		want:  [][3]string{{"1", "100", "1"}, {"2", "450", "3"}},
	},
}

func newDemoCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Watch a materialized view follow inserts, updates and deletes",
		Long: `Walk through RockStream's core idea on an embedded in-memory instance.

The demo creates an orders table and a materialized view of sales per
store, then inserts, updates (moving an order from one store to another)
and deletes orders. After each statement it prints the view and the rows
of the view that changed, and checks both the view's contents against
what the demo expects and against the same query run from scratch. It
ends by showing the view's incremental dataflow with EXPLAIN INCREMENTAL.

Nothing is written to disk. The demo doubles as a smoke test: it exits
with status 1 and says what differed if any check fails.`,
		Example: `  rockstream demo`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDemo(cmd.Context(), cmd.OutOrStdout(), demoSteps)
		},
	}
}

// runDemo runs steps on a fresh in-memory instance, printing each one to
// w, and returns an error saying what differed if a check fails.
func runDemo(ctx context.Context, w io.Writer, steps []demoStep) (err error) {
	db, err := rockstream.Open(rockstream.Options{})
	if err != nil {
		return fmt.Errorf("opening an in-memory instance: %w", err)
	}
	defer joinClose(&err, db.Close)
	sess := db.Session()
	defer joinClose(&err, sess.Close)

	fmt.Fprintln(w, "RockStream demo: a materialized view kept up to date one change at a time.")
	var before [][3]string
	for i, step := range steps {
		fmt.Fprintf(w, "\n%d. %s\n\n", i+1, strings.ReplaceAll(step.title, "\n", "\n   "))
		fmt.Fprint(w, indent(step.stmt+";", "    "))
		if _, err := sess.Exec(ctx, step.stmt); err != nil {
			return fmt.Errorf("demo step %d failed: %s: %w", i+1, firstLine(step.stmt), err)
		}
		if step.want == nil {
			continue
		}
		view, err := sess.Exec(ctx, demoReadView)
		if err != nil {
			return fmt.Errorf("demo step %d: reading sales_by_store: %w", i+1, err)
		}
		got, err := demoRows(view)
		if err != nil {
			return fmt.Errorf("demo step %d: sales_by_store: %w", i+1, err)
		}
		fmt.Fprintf(w, "\n    sales_by_store now:\n\n")
		var table bytes.Buffer
		if err := writeAligned(&table, sortedResult(view)); err != nil {
			return err
		}
		fmt.Fprint(w, indent(strings.TrimSuffix(table.String(), "\n"), "    "))
		fmt.Fprintf(w, "\n    change to the view (- row left, + row entered):\n")
		fmt.Fprint(w, indent(demoChange(before, got), "      "))
		if !slices.Equal(got, step.want) {
			return fmt.Errorf("demo step %d: sales_by_store is\n%s\nbut the demo expects\n%s",
				i+1, formatDemoRows(got), formatDemoRows(step.want))
		}
		batch, err := sess.Exec(ctx, demoViewQuery)
		if err != nil {
			return fmt.Errorf("demo step %d: running the view's query from scratch: %w", i+1, err)
		}
		fresh, err := demoRows(batch)
		if err != nil {
			return fmt.Errorf("demo step %d: the view's query: %w", i+1, err)
		}
		if !slices.Equal(got, fresh) {
			return fmt.Errorf("demo step %d: sales_by_store is\n%s\nbut its query run from scratch returns\n%s",
				i+1, formatDemoRows(got), formatDemoRows(fresh))
		}
		before = got
	}

	const explain = "EXPLAIN INCREMENTAL sales_by_store"
	fmt.Fprintf(w, "\n%d. Show the incremental dataflow that maintains the view.\n\n    %s;\n\n", len(steps)+1, explain)
	plan, err := sess.Exec(ctx, explain)
	if err != nil {
		return fmt.Errorf("demo: %s: %w", explain, err)
	}
	if len(plan.Rows) == 0 {
		return fmt.Errorf("demo: %s returned no rows", explain)
	}
	var table bytes.Buffer
	if err := writeAligned(&table, plan); err != nil {
		return err
	}
	fmt.Fprint(w, indent(strings.TrimSuffix(table.String(), "\n"), "    "))
	fmt.Fprintf(w, "\nEvery step matched the view's query run from scratch.\n")
	return nil
}

// demoRows returns the (store_id, total_amount, orders) rows of res in
// store_id order.
func demoRows(res *rockstream.Result) ([][3]string, error) {
	if len(res.Columns) != 3 {
		return nil, fmt.Errorf("got %d columns, want 3", len(res.Columns))
	}
	rows := make([][3]string, 0, len(res.Rows))
	for _, r := range res.Rows {
		var row [3]string
		for i, v := range r {
			if v == nil {
				return nil, fmt.Errorf("unexpected NULL in column %s", res.Columns[i].Name)
			}
			row[i] = *v
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, compareDemoRows)
	return rows, nil
}

func compareDemoRows(a, b [3]string) int {
	for i := range a {
		x, errx := strconv.ParseInt(a[i], 10, 64)
		y, erry := strconv.ParseInt(b[i], 10, 64)
		switch {
		case errx == nil && erry == nil && x != y:
			if x < y {
				return -1
			}
			return 1
		case (errx != nil || erry != nil) && a[i] != b[i]:
			return strings.Compare(a[i], b[i])
		}
	}
	return 0
}

// sortedResult returns res with its rows in the demo's order.
func sortedResult(res *rockstream.Result) *rockstream.Result {
	out := *res
	out.Rows = slices.Clone(res.Rows)
	slices.SortStableFunc(out.Rows, func(a, b []*string) int {
		var x, y [3]string
		for i := 0; i < 3 && i < len(a) && i < len(b); i++ {
			if a[i] != nil {
				x[i] = *a[i]
			}
			if b[i] != nil {
				y[i] = *b[i]
			}
		}
		return compareDemoRows(x, y)
	})
	return &out
}

// demoChange lists the rows that left the view ("-") and the rows that
// entered it ("+") between two states of its contents.
func demoChange(before, after [][3]string) string {
	var b strings.Builder
	for _, r := range before {
		if !slices.Contains(after, r) {
			fmt.Fprintf(&b, "- %s\n", formatDemoRow(r))
		}
	}
	for _, r := range after {
		if !slices.Contains(before, r) {
			fmt.Fprintf(&b, "+ %s\n", formatDemoRow(r))
		}
	}
	if b.Len() == 0 {
		return "(none)\n"
	}
	return b.String()
}

func formatDemoRow(r [3]string) string {
	return fmt.Sprintf("store_id=%s total_amount=%s orders=%s", r[0], r[1], r[2])
}

func formatDemoRows(rows [][3]string) string {
	if len(rows) == 0 {
		return "  (no rows)"
	}
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = "  " + formatDemoRow(r)
	}
	return strings.Join(lines, "\n")
}

// indent prefixes every non-empty line of s with prefix and ends it with a
// newline.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
