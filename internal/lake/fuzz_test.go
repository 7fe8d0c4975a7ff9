package lake

import (
	"testing"
)

// FuzzClassify: any text classifies or fails with a SQLSTATE, never a
// panic; every statement gets a kind, and an unsupported one its error.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		`SELECT 1`, `COPY (SELECT "a" FROM "public"."t" WHERE "b" <= '3' LIMIT 1) TO STDOUT (FORMAT "binary")`,
		`INSERT INTO t VALUES (1, NOW(), CAST(NULL AS BOOLEAN), '\x78'::bytea)`,
		`WITH v(a) AS (VALUES (1)) UPDATE t SET b = v.a FROM v WHERE t.a = v.a`,
		`DELETE FROM t WHERE ctid IN ('(0,1)')`, `CREATE TABLE IF NOT EXISTS t(a BIGINT PRIMARY KEY)`,
		`BEGIN; SELECT oid, nspname FROM pg_namespace ORDER BY oid; COMMIT`, `SELEC`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		stmts, err := Classify(sql)
		if err != nil {
			if se := asSQLError(err); se.code == "" {
				t.Fatalf("error without SQLSTATE: %v", err)
			}
			return
		}
		for _, st := range stmts {
			if st.Kind == KindUnsupported && (st.err == nil || st.err.code == "") {
				t.Fatalf("unsupported statement %q without an error", st.Text)
			}
			_ = st.String()
		}
	})
}

// FuzzCopyIn: any COPY FROM stream decodes or fails with a SQLSTATE,
// never a panic, for the columns of a catalog table.
func FuzzCopyIn(f *testing.F) {
	cols := []Column{{Name: "a", Type: TInt8}, {Name: "b", Type: TVarchar}, {Name: "c", Type: TBool},
		{Name: "d", Type: TUUID}, {Name: "e", Type: TTimestamptz}, {Name: "f", Type: TFloat8}}
	good := encodeBinaryCopy(f, []Type{TInt8, TVarchar, TBool, TUUID, TTimestamptz, TFloat8},
		[]string{"1|x|true|01a230c2-da2c-7c8e-8e62-4d0cd3f5b5a1|2026-01-01 00:00:00+00|1.5", "NULL|NULL|NULL|NULL|NULL|NULL"})
	var all []byte
	for _, c := range good {
		all = append(all, c...)
	}
	f.Add(all, true)
	f.Add([]byte("1\tx\tt\t01a230c2-da2c-7c8e-8e62-4d0cd3f5b5a1\t2026-01-01 00:00:00+00\t1.5\n"), false)
	f.Add([]byte("PGCOPY\n\xff\r\n\x00"), true)
	f.Fuzz(func(t *testing.T, data []byte, binary bool) {
		rows, err := decodeCopyIn(data, cols, copyFmt{binary: binary, nullStr: `\N`})
		if err != nil {
			if se := asSQLError(err); se.code == "" || se.code == codeInternal {
				t.Fatalf("error without a precise SQLSTATE: %v", err)
			}
			return
		}
		for _, r := range rows {
			if len(r) != len(cols) {
				t.Fatalf("row of %d values", len(r))
			}
		}
	})
}
