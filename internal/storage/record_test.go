package storage

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

func TestRecordLayout(t *testing.T) {
	// The example of docs/format/storage.md.
	got := hex.EncodeToString(EncodeRecord('C', 1, []byte("{}")))
	if want := "52537231" + "43" + "0001" + "00000002" + "2dc73f9a" + "7b7d"; got != want {
		t.Fatalf("EncodeRecord = %s, want %s", got, want)
	}
	if got := AppendRecord([]byte("prefix"), 'C', 1, []byte("{}")); !bytes.HasPrefix(got, []byte("prefix")) ||
		!bytes.Equal(got[6:], EncodeRecord('C', 1, []byte("{}"))) {
		t.Fatalf("AppendRecord = %x", got)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for _, payload := range [][]byte{nil, {}, []byte("x"), bytes.Repeat([]byte{0, 0xff}, 1000)} {
		rec := EncodeRecord(0x7f, 0xbeef, payload)
		kind, version, got, err := DecodeRecord(rec)
		if err != nil || kind != 0x7f || version != 0xbeef || !bytes.Equal(got, payload) {
			t.Fatalf("DecodeRecord = %x %x %q %v", kind, version, got, err)
		}
	}
}

// Every single-bit flip and every truncation of a record is detected.
func TestRecordDamageDetected(t *testing.T) {
	rec := EncodeRecord('C', 3, []byte(`{"id":7,"kind":"table","name":"t","sql":"CREATE TABLE t (a int)"}`))
	check := func(what string, b []byte, wantIn string) {
		t.Helper()
		_, _, _, err := DecodeRecord(b)
		if err == nil {
			t.Fatalf("%s: damaged record decoded", what)
		}
		if errs.CodeOf(err) != errs.DataCorrupted || errs.SQLState(err) != "XX001" {
			t.Fatalf("%s: code %s", what, errs.CodeOf(err))
		}
		msg := err.Error()
		if !strings.Contains(msg, wantIn) || !strings.Contains(msg, "rockstream doctor") || !strings.Contains(msg, "checkpoint") {
			t.Fatalf("%s: message %q", what, msg)
		}
	}
	for i := range rec {
		for bit := range 8 {
			b := bytes.Clone(rec)
			b[i] ^= 1 << bit
			want := "CRC32C"
			switch {
			case i < 4:
				want = "magic"
			case i >= 7 && i < 11:
				want = "payload bytes"
			}
			check("flip", b, want)
		}
	}
	for n := range len(rec) {
		want := "payload bytes"
		if n < recordHeaderLen {
			want = "shorter than"
		}
		check("truncate", rec[:n], want)
	}
	check("extend", append(bytes.Clone(rec), 0), "payload bytes")
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(EncodeRecord('C', 1, []byte("{}")))
	f.Add([]byte("RSr1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		kind, version, payload, err := DecodeRecord(b)
		if err != nil {
			return
		}
		if !bytes.Equal(EncodeRecord(kind, version, payload), b) {
			t.Fatalf("accepted %x, which is not the encoding of what it decodes to", b)
		}
	})
}
