package types

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestOracleArraySend compares AppendBinary's bytes for arrays with
// PostgreSQL's array_send, and reads PostgreSQL's bytes back.
func TestOracleArraySend(t *testing.T) {
	o := newOracle(t)
	for typ, texts := range arrayInputs {
		at := mustType(t, typ)
		var lits []string
		for _, text := range texts {
			if _, err := Parse(at, text); err == nil {
				lits = append(lits, text)
			}
		}
		if len(lits) == 0 {
			continue
		}
		rows := make([]string, len(lits))
		for i, lit := range lits {
			rows[i] = fmt.Sprintf("(%d, %s::%s)", i, sqlQuote(lit), typ)
		}
		res, err := o.exec(fmt.Sprintf("SELECT x, array_send(x) FROM (VALUES %s) v(i, x) ORDER BY i", strings.Join(rows, ", ")))
		if err != nil {
			t.Fatalf("%s: PostgreSQL: %v", typ, err)
		}
		for i, lit := range lits {
			v, _ := Parse(at, lit)
			pgBytes := decodeByteaText(t, res[0].Rows[i][1])
			got, err := AppendBinary(nil, v, at)
			if err != nil || string(got) != string(pgBytes) {
				t.Errorf("array_send(%s::%s): got %x, %v; PostgreSQL %x", lit, typ, got, err, pgBytes)
			}
			back, err := ParseBinary(pgBytes, at)
			if err != nil || Format(back, at) != string(res[0].Rows[i][0]) {
				t.Errorf("ParseBinary(%x) = %q, %v; PostgreSQL prints %q", pgBytes, Format(back, at), err, res[0].Rows[i][0])
			}
		}
	}
}

// TestOracleArrayReceive loads malformed and unusual array bytes into
// PostgreSQL with COPY (FORMAT binary) and demands the same verdict:
// accepted with the same value, or rejected with the same SQLSTATE and
// message.
func TestOracleArrayReceive(t *testing.T) {
	o := newOracle(t)
	if _, err := o.exec("CREATE TEMP TABLE array_recv (i int4, v int4[])"); err != nil {
		t.Fatal(err)
	}
	be := func(words ...int64) []byte {
		var b []byte
		for _, w := range words {
			b = binary.BigEndian.AppendUint32(b, uint32(w))
		}
		return b
	}
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	at := ArrayType(Of(Int4))
	cases := map[string][]byte{
		"empty":              be(0, 0, 23),
		"empty with a dim":   be(1, 0, 23, 0, 1),
		"one":                be(1, 0, 23, 1, 1, 4, 7),
		"null element":       be(1, 1, 23, 2, 1, -1, 4, 7),
		"null flag unset":    be(1, 0, 23, 1, 1, -1),
		"bad flags":          be(1, 2, 23, 1, 1, 4, 7),
		"negative ndim":      be(-1, 0, 23),
		"too many dims":      be(7, 0, 23),
		"wrong element type": be(1, 0, 20, 1, 1, 8, 0, 7),
		"unknown element":    be(1, 0, 9999, 1, 1, 4, 7),
		"short header":       be(1, 0),
		"short element":      cat(be(1, 0, 23, 1, 1, 4), []byte{0, 0}),
		"long element":       be(1, 0, 23, 1, 1, 8, 0, 7),
		"element length":     be(1, 0, 23, 1, 1, 40, 7),
		"bad length":         be(1, 0, 23, 1, 1, -2, 7),
		"trailing":           be(1, 0, 23, 1, 1, 4, 7, 0),
		"negative dim":       be(1, 0, 23, -1, 1),
		"huge lower bound":   be(1, 0, 23, 2, 2147483647, 4, 1, 4, 2),
		"missing element":    be(1, 0, 23, 2, 1, 4, 7),
		"two dims":           be(2, 0, 23, 1, 1, 1, 1, 4, 7),
		"lower bound":        be(1, 0, 23, 1, 0, 4, 7),
		"two by two":         be(2, 1, 23, 2, 0, 2, -5, 4, 1, -1, 4, 3, 4, 4),
		"three dims":         be(3, 0, 23, 1, 1, 2, 1, 1, 1, 4, 1, 4, 2),
		"six dims":           be(6, 0, 23, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 9),
		"zero inner dim":     be(2, 0, 23, 2, 1, 0, 1),
		"missing 2-D item":   be(2, 0, 23, 2, 1, 2, 1, 4, 1, 4, 2, 4, 3),
	}
	for name, src := range cases {
		v, err := ParseBinary(src, at)
		pg := o.copyBinary(t, "array_recv", [][]byte{src})
		if err != nil {
			got := errs.SQLState(err) + " " + err.Error()
			if pg != got {
				t.Errorf("%s (%x): got %s; PostgreSQL %s", name, src, got, pg)
			}
			continue
		}
		if pg != "" {
			t.Errorf("%s (%x): accepted as %s; PostgreSQL %s", name, src, Format(v, at), pg)
			continue
		}
		res, err := o.exec("SELECT v FROM array_recv")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := Format(v, at), string(res[0].Rows[0][0]); got != want {
			t.Errorf("%s (%x): got %s; PostgreSQL %s", name, src, got, want)
		}
		o.exec("TRUNCATE array_recv")
	}
}
