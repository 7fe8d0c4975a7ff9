package types

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

func TestOracleByteaFunctions(t *testing.T) {
	bytes := []ex{l("bytea", `\x`), l("bytea", `\x00`), l("bytea", `\x0102ff`), l("bytea", `\x5c`), l("bytea", `\x68c3a96c6c6f`),
		l("bytea", `\xc328`), l("bytea", `\xe282ac41`), l("bytea", `\xf09f9880`), l("bytea", `\xe282`), l("bytea", `\x41004243`),
		l("bytea", `\xed9fbf`), l("bytea", `\xeda080`), l("bytea", `\xc0af`), l("bytea", `\xf4908080`), l("bytea", `\xff`),
		l("bytea", `\x`+strings.Repeat("0123456789abcdef", 8)), l("bytea", `\x`+strings.Repeat("ab", 57)),
		l("bytea", `\x`+strings.Repeat("cd", 56)), l("bytea", `\x`+strings.Repeat("ef", 58)), n("bytea"), u(`\x0a0b`)}
	var cases []ex
	for _, b := range bytes {
		for _, f := range []string{"hex", "base64", "escape", "HEX", "Base64", "bogus"} {
			cases = append(cases, fn("encode", b, txt(f)))
		}
		for _, e := range []string{"UTF8", "utf-8", "Unicode", "SQL_ASCII", "latin1", "ISO-8859-1", "nope"} {
			cases = append(cases, fn("convert_from", b, txt(e)))
		}
		cases = append(cases, fn("convert", b, txt("LATIN1"), txt("UTF8")), fn("convert", b, txt("UTF8"), txt("latin1")),
			fn("convert", b, txt("sql_ascii"), txt("utf8")), fn("convert", b, txt("UTF8"), txt("x")), fn("convert", b, txt("x"), txt("y")),
			fn("bit_count", b), fn("length", b), fn("octet_length", b), fn("md5", b),
			fn("sha224", b), fn("sha256", b), fn("sha384", b), fn("sha512", b))
		for _, k := range []int64{-1, 0, 1, 7, 8, 15, 23, 24, 100} {
			cases = append(cases, fn("get_bit", b, i8(k)), fn("get_byte", b, i4(k)),
				fn("set_bit", b, i8(k), i4(1)), fn("set_bit", b, i8(k), i4(0)), fn("set_bit", b, i8(k), i4(2)),
				fn("set_byte", b, i4(k), i4(0x41)), fn("set_byte", b, i4(k), i4(-1)), fn("set_byte", b, i4(k), i4(300)))
		}
	}
	for _, s := range []ex{txt(""), txt("abc"), txt("héllo"), txt("€uro"), txt("ÿ"), txt(`back\slash`), n("text")} {
		for _, e := range []string{"UTF8", "SQL_ASCII", "LATIN1", "latin-1", "nope"} {
			cases = append(cases, fn("convert_to", s, txt(e)))
		}
	}
	for _, s := range []string{"", "00", "0a0B", "0 1", " 01 02\n\t\r", "abc", "0g", "zz", "é1", "0x", "ff ff ", "1"} {
		cases = append(cases, fn("decode", txt(s), txt("hex")))
	}
	for _, s := range []string{"", "QQ==", "QUI=", "QUJD", "QUJDRA==", "QQ", "QQ=", "Q===", "=", "QQ==QQ==", "QUJD\nRA==",
		" Q U J D ", "QUJ*", "QUJé", "QQ=x", "QUJDRA=", "A=BC", "AB=C", "////", "+/+/"} {
		cases = append(cases, fn("decode", txt(s), txt("base64")))
	}
	for _, s := range []string{"", "abc", `a\\b`, `\000`, `\101\102`, `\377`, `\400`, `\18`, `\`, `a\`, `\\\`, `\12`, `x\101`} {
		cases = append(cases, fn("decode", txt(s), txt("escape")))
	}
	cases = append(cases, fn("decode", txt("00"), txt("nope")), fn("decode", n("text"), txt("hex")),
		fn("decode", txt("00"), n("text")), fn("encode", l("bytea", `\x01`), n("text")), fn("decode", u("QUJD"), u("base64")),
		fn("get_bit", l("bytea", `\x01`), i4(0)), fn("set_bit", l("bytea", `\x01`), i4(1), i4(1)),
		fn("get_byte", l("bytea", `\x01`), i8(0)), fn("bit_count", u(`\x07`)), fn("sha256", txt("abc")), fn("sha256", u("abc")),
		fn("convert_from", l("bytea", `\x41`), n("name")), fn("encode", txt("abc"), txt("hex")))
	checkAll(t, cases)
}

// TestConvertUnsupportedEncodings checks that an encoding PostgreSQL has
// and RockStream does not convert is refused with 0A000, and an unknown
// name with 22023 even then.
func TestConvertUnsupportedEncodings(t *testing.T) {
	for _, c := range []struct {
		args  []Value
		f     func([]Value) (Value, error)
		state string
	}{
		{[]Value{MakeBytea([]byte("a")), MakeText("WIN1252")}, byteaConvertFrom, "0A000"},
		{[]Value{MakeBytea([]byte("a")), MakeText("euc-jp")}, byteaConvertFrom, "0A000"},
		{[]Value{MakeText("a"), MakeText("KOI8R")}, byteaConvertTo, "0A000"},
		{[]Value{MakeBytea([]byte("a")), MakeText("EUC_JP"), MakeText("nope")}, byteaConvert, "22023"},
		{[]Value{MakeBytea([]byte("a")), MakeText("nope"), MakeText("EUC_JP")}, byteaConvert, "22023"},
	} {
		_, err := c.f(c.args)
		if got := errs.SQLState(err); got != c.state {
			t.Errorf("%v: got %v (%s), want SQLSTATE %s", c.args, err, got, c.state)
		}
	}
}
