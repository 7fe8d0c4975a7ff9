package fastinsert

import (
	"fmt"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// check compares Parse with pg_query on text: when Parse accepts, the
// trees must be equal, locations included; accepted reports whether it
// did.
func check(t *testing.T, text string) (accepted bool) {
	t.Helper()
	fast, ok := Parse(text)
	if !ok {
		return false
	}
	slow, err := pg.Parse(text)
	if err != nil {
		t.Fatalf("Parse accepted %q, which PostgreSQL rejects: %v", text, err)
	}
	if !proto.Equal(fast, slow) {
		t.Fatalf("Parse(%q) differs from PostgreSQL's tree:\nfast: %v\npg:   %v", text, fast, slow)
	}
	return true
}

// The statements Parse must accept, and those it must leave to
// PostgreSQL's parser.
var (
	accepted = []string{
		"INSERT INTO t VALUES (1)",
		"insert into t values (1, 'a', -5, 2147483647, 2147483648, -2147483648, -2147483649, 1.5, NULL, true, FALSE, DEFAULT, 0, -0);",
		"INSERT INTO s.\"T x\" (a, \"B\") VALUES (-1.5e3, ''''), (.5, 1.), (1e10, 1E-3), (-.5e+2, 'x''y''')",
		"  INSERT\tINTO t(a,b)VALUES(1,'x'),(2,'y')  ;  ",
		"INSERT INTO t VALUES ('with \\ backslash', 'line\nbreak', '')",
		"INSERT INTO t VALUES (- 7, -\n8)",
		"INSERT INTO t (name, value, data, time, values) VALUES (1, 2, 3, 4, 5)",
		"INSERT INTO event VALUES ('ünïcödé', 99999999999999999999999999)",
		"INSERT INTO t1$x VALUES (1)",
		"INSERT INTO t VALUES ('a'::text, TIMESTAMP  '2026-01-01 10:00', date 'x', 'y' :: int, 'z'::numeric(10, 2), 'a'::text[], '{1}'::int [ ] )",
		"INSERT INTO t VALUES (TIMESTAMP WITH TIME ZONE 'q', double precision '1.5', INTERVAL '1 day', 'x'::varchar(3), 'y'::timestamp(3) with time zone, bool 't')",
		"INSERT INTO t VALUES ('a'::text), ('b'::text), (TIMESTAMP 'x'), (TIMESTAMP\n'y')",
		"INSERT INTO t VALUES (''::ChAr, 'x'::character, char 'y', 'z'::char(2), varchar 'v', 'w'::bit)",
	}
	declined = []string{
		"INSERT INTO t VALUES ($1)",
		"INSERT INTO t VALUES (1) RETURNING *",
		"INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING",
		"INSERT INTO t SELECT 1",
		"INSERT INTO t DEFAULT VALUES",
		"INSERT INTO t AS x VALUES (1)",
		"INSERT INTO t VALUES (E'a\\n')",
		"INSERT INTO t VALUES ('a'\n'b')",
		"INSERT INTO t VALUES (+1)",
		"INSERT INTO t VALUES (1 + 1)",
		"INSERT INTO t VALUES (0x1f), (1_000), (007)",
		"INSERT INTO t VALUES (1) -- comment",
		"INSERT INTO t /* c */ VALUES (1)",
		"INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)",
		"INSERT INTO select VALUES (1)",
		"INSERT INTO t (left) VALUES (1)",
		"INSERT INTO t VALUES (now())",
		"INSERT INTO t VALUES ($$x$$)",
		"INSERT INTO t VALUES (1abc)",
		"INSERT INTO Tëst VALUES (1)",
		"INSERT INTO t VALUES ('\xff')",
		"INSERT INTO \"\" VALUES (1)",
		"INSERT INTO t VALUES (1",
		"INSERT INTO t VALUES ()",
		"WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x",
		"INSERT INTO t VALUES ('x'::int::text)",
		"INSERT INTO t VALUES ('x'::int foo)",
		"INSERT INTO t VALUES (INTERVAL '1' DAY)",
		"INSERT INTO t VALUES ('a' COLLATE \"C\")",
		"INSERT INTO t VALUES (TIMESTAMP(3) 'x')",
		"INSERT INTO t VALUES ('x'::\"MyType\")",
		"INSERT INTO t VALUES ('x'::public.mytype)",
		"INSERT INTO t VALUES (1::int)",
		"INSERT INTO t VALUES (''::a INTO b)",
		"INSERT INTO t VALUES (ALL timestamp 'x')",
		"INSERT INTO t VALUES (DISTINCT timestamp 'x')",
		"INSERT INTO t VALUES (date 'x' FROM b)",
		"INSERT INTO t VALUES (TI E'x')",
		"INSERT INTO t VALUES (TIMESTAMP'2024-01-01')",
		"INSERT INTO t VALUES (text N'x')",
	}
)

func TestParse(t *testing.T) {
	for _, text := range accepted {
		if !check(t, text) {
			t.Errorf("Parse declined %q", text)
		}
	}
	for _, text := range declined {
		if check(t, text) {
			t.Errorf("Parse accepted %q, which it should leave to PostgreSQL's parser", text)
		}
	}
}

// FuzzParse checks that whatever Parse accepts, PostgreSQL parses to the
// same tree.
func FuzzParse(f *testing.F) {
	for _, text := range append(append([]string(nil), accepted...), declined...) {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		check(t, text)
	})
}

func BenchmarkParse(b *testing.B) {
	text := "INSERT INTO bid (auction, bidder, price, channel, url, date_time, extra) VALUES " +
		"(1000, 2001, 3500, 'Google', 'https://www.nexmark.com/abc/item.htm?query=1', '2026-11-30 10:00:00.123', ''), " +
		"(1001, 2002, 120, 'Apple', 'https://www.nexmark.com/def/item.htm?query=1', '2026-11-30 10:00:00.456', 'x')"
	b.Run("fastinsert", func(b *testing.B) {
		for b.Loop() {
			if _, ok := Parse(text); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("pg_query", func(b *testing.B) {
		for b.Loop() {
			if _, err := pg.Parse(text); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// manyRows returns an INSERT of n rows of three values, most of them
// integers (the slabs' nodes) with strings, NULLs, big and negative
// numbers and DEFAULT among them.
func manyRows(n int) string {
	var sb strings.Builder
	sb.WriteString("INSERT INTO t VALUES ")
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		switch i % 7 {
		case 3:
			fmt.Fprintf(&sb, "(%d, NULL, 'r%d')", i, i)
		case 5:
			fmt.Fprintf(&sb, "(%d, -%d, 9999999999%d, DEFAULT)", i, i, i)
		default:
			fmt.Fprintf(&sb, "(%d, %d, %d)", i, i%100, -i*7)
		}
	}
	return sb.String()
}

// TestParseManyRows checks statements of many rows, which take the
// nodes of several slabs, against PostgreSQL's parser.
func TestParseManyRows(t *testing.T) {
	for _, n := range []int{1, 2, 9, 100, 1000, 3000} {
		if !check(t, manyRows(n)) {
			t.Fatalf("Parse declined the INSERT of %d rows", n)
		}
	}
}

// BenchmarkParseRows measures an INSERT of 1,000 rows of three integers,
// the gateway benchmarks' statement.
func BenchmarkParseRows(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("INSERT INTO t VALUES ")
	for i := 0; i < 1000; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, %d, %d)", 1_000_000+i, i%10_000, i%997)
	}
	text := sb.String()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Parse(text); !ok {
			b.Fatal("declined")
		}
	}
}
