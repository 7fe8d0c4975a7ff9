package types

import (
	"strconv"
	"testing"
)

func TestOracleTrigFunctions(t *testing.T) {
	args := []ex{f8("0"), f8("-0"), f8("0.5"), f8("-0.5"), f8("1"), f8("-1"), f8("1.0000001"), f8("-1.5"),
		f8("2"), f8("3.141592653589793"), f8("1e300"), f8("-1e-300"), f8("710"), f8("-710"), f8("NaN"),
		f8("Infinity"), f8("-Infinity"), num("0.25"), i4(3), u("0.75"), n("double precision")}
	for _, d := range []int{-720, -390, -360, -270, -225, -180, -150, -135, -120, -90, -60, -45, -30, 0, 15, 30,
		45, 60, 90, 120, 135, 150, 180, 210, 225, 240, 270, 300, 315, 330, 360, 405, 450, 540, 720, 1080} {
		args = append(args, f8(strconv.Itoa(d)))
	}
	args = append(args, f8("0.1"), f8("89.9"), f8("1e20"), f8("-1e20"), f8("12345.678"))
	var cases []ex
	for _, x := range args {
		for _, name := range []string{"sin", "cos", "tan", "cot", "asin", "acos", "atan",
			"sind", "cosd", "tand", "cotd", "asind", "acosd", "atand",
			"sinh", "cosh", "tanh", "asinh", "acosh", "atanh"} {
			cases = append(cases, fn(name, x))
		}
	}
	pairs := []ex{f8("0"), f8("-0"), f8("1"), f8("-1"), f8("2"), f8("Infinity"), f8("-Infinity"), f8("NaN"),
		f8("1e-300"), n("double precision")}
	for _, y := range pairs {
		for _, x := range pairs {
			cases = append(cases, fn("atan2", y, x), fn("atan2d", y, x))
		}
	}
	cases = append(cases, fn("sin", txt("1")), fn("sind", i8(30)), fn("pi"), fn("degrees", fn("pi")),
		fn("radians", f8("180")))
	checkAll(t, cases)
}

func TestOracleBitwiseOperators(t *testing.T) {
	vals := map[string][]string{
		"smallint": {"0", "1", "-1", "5", "12", "-32768", "32767", "255"},
		"integer":  {"0", "1", "-1", "6", "-2147483648", "2147483647", "65535"},
		"bigint":   {"0", "1", "-1", "10", "-9223372036854775808", "9223372036854775807", "4294967296"},
	}
	counts := []ex{i4(0), i4(1), i4(3), i4(15), i4(16), i4(31), i4(32), i4(33), i4(63), i4(64), i4(65),
		i4(-1), i4(-33), i2(2), n("integer")}
	var cases []ex
	for typ, vs := range vals {
		for _, a := range vs {
			x := l(typ, a)
			cases = append(cases, un{"~", x})
			for _, b := range vs {
				y := l(typ, b)
				for _, op := range []string{"&", "|", "#"} {
					cases = append(cases, bin{op, x, y})
				}
			}
			for _, c := range counts {
				cases = append(cases, bin{"<<", x, c}, bin{">>", x, c})
			}
		}
	}
	cases = append(cases, bin{"&", i2(12), i4(10)}, bin{"|", i4(12), i8(3)}, bin{"#", i2(5), i8(3)},
		bin{"&", u("12"), i4(10)}, bin{"|", i8(1), u("6")}, bin{"<<", i2(1), i8(3)}, bin{"&", n("integer"), i4(1)},
		un{"~", n("bigint")}, un{"~", u("5")}, bin{"&", num("1"), i4(1)}, bin{"<<", u("1"), i4(4)},
		bin{"&", u("1"), u("2")}, bin{"<<", u("1"), u("2")}, bin{"#", u("1"), u("2")}, bin{">>", i8(8), u("1")})
	checkAll(t, cases)
}
