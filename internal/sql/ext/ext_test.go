package ext

import (
	"strings"
	"testing"
)

func blank(n int) string { return strings.Repeat(" ", n) }

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Statement
	}{
		{"SELECT 1", Statement{}},
		{"EXPLAIN SELECT 1", Statement{}},
		{"explain incremental sales", Statement{Kind: ExplainIncremental, Name: "sales"}},
		{"  EXPLAIN  INCREMENTAL public.Sales ;", Statement{Kind: ExplainIncremental, Name: "sales"}},
		{`EXPLAIN INCREMENTAL "My ""View"""`, Statement{Kind: ExplainIncremental, Name: `My "View"`}},
		{"EXPLAIN INCREMENTAL SELECT a FROM t", Statement{Kind: ExplainIncremental, Query: "SELECT a FROM t", QueryOffset: 20}},
		{"EXPLAIN INCREMENTAL\n  SELECT 1;", Statement{Kind: ExplainIncremental, Query: "SELECT 1", QueryOffset: 22}},
		{"SELECT * FROM v AS OF EPOCH 12;", Statement{Kind: AsOfEpoch, Query: "SELECT * FROM v", Epoch: 12}},
		{" select a as of from v as of epoch 3", Statement{Kind: AsOfEpoch, Query: "select a as of from v", QueryOffset: 1, Epoch: 3}},
		{"SELECT 'AS OF EPOCH 3'", Statement{}},
		{"SELECT * FROM v AS OF EPOCH 7 \n ; \t", Statement{Kind: AsOfEpoch, Query: "SELECT * FROM v", Epoch: 7}},
		{"SELECT * FROM v AS OF EPOCH 7;;", Statement{}},
		{"SELECT * FROM v AS OF EPOCH 7 -- latest", Statement{Kind: AsOfEpoch, Query: "SELECT * FROM v", Epoch: 7}},
		{"SELECT a FROM v AS OF EPOCH 4 ORDER BY a DESC LIMIT 2;", Statement{Kind: AsOfEpoch, Query: "SELECT a FROM v" + blank(15) + "ORDER BY a DESC LIMIT 2", Epoch: 4}},
		{"SELECT a FROM v as of epoch 4\nLIMIT 1 OFFSET 1", Statement{Kind: AsOfEpoch, Query: "SELECT a FROM v" + blank(14) + "\nLIMIT 1 OFFSET 1", Epoch: 4}},
		{"SELECT a FROM v AS OF EPOCH 4 OFFSET 1 FETCH FIRST 1 ROW ONLY", Statement{Kind: AsOfEpoch, Query: "SELECT a FROM v" + blank(15) + "OFFSET 1 FETCH FIRST 1 ROW ONLY", Epoch: 4}},
		{"SELECT a FROM v AS OF EPOCH 9999999999", Statement{Kind: AsOfEpoch, Query: "SELECT a FROM v", Epoch: 9999999999}},
		{"SELECT a FROM v AS OF EPOCH 4 WHERE a > 1", Statement{}},
		{"SELECT a FROM v AS OF EPOCH 4 ORDER BY a; SELECT 1", Statement{}},
		{"SELECT * FROM (SELECT a FROM v AS OF EPOCH 4) s", Statement{}},
		{"SELECT 'x AS OF EPOCH 4' ORDER BY 1", Statement{}},
		{`SELECT "AS OF EPOCH 4" FROM v`, Statement{}},
		{"SELECT a FROM v /* AS OF EPOCH 4 */ ORDER BY a", Statement{}},
		{"SELECT a FROM v AS OF EPOCH 4.5", Statement{}},
		{"INSERT INTO t VALUES (1), (2)", Statement{}},
	} {
		if got := Parse(tc.in); got != tc.want {
			t.Errorf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}
