package scram

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/bidi"
	"golang.org/x/text/unicode/norm"
)

// saslprep prepares a password as PostgreSQL does before SCRAM (RFC 4013
// SASLprep, src/common/saslprep.c): non-ASCII spaces become spaces,
// characters "commonly mapped to nothing" go, the result is NFKC
// normalized. A password that is ASCII, not UTF-8, or that SASLprep
// prohibits (control and private-use characters, bidirectional text that
// breaks the rules, ...) is used as it is, which is PostgreSQL's fallback
// too: clients (libpq) prepare passwords the same way, so both sides
// derive the same keys.
func saslprep(password string) string {
	ascii := true
	for i := 0; i < len(password); i++ {
		if password[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii || !utf8.ValidString(password) {
		return password
	}
	mapped := make([]rune, 0, len(password))
	for _, r := range password {
		switch {
		case mappedToNothing(r):
		case nonASCIISpace(r):
			mapped = append(mapped, ' ')
		default:
			mapped = append(mapped, r)
		}
	}
	out := norm.NFKC.String(string(mapped))
	if out == "" {
		return password
	}
	randAL, l := false, false
	for _, r := range out {
		if prohibited(r) {
			return password
		}
		switch c, _ := bidi.LookupRune(r); c.Class() {
		case bidi.R, bidi.AL:
			randAL = true
		case bidi.L:
			l = true
		}
	}
	if randAL {
		// RFC 3454 section 6: text with right-to-left characters has no
		// left-to-right ones, and begins and ends with right-to-left ones.
		first, _ := utf8.DecodeRuneInString(out)
		last, _ := utf8.DecodeLastRuneInString(out)
		if l || !isRandAL(first) || !isRandAL(last) {
			return password
		}
	}
	return out
}

func isRandAL(r rune) bool {
	c, _ := bidi.LookupRune(r)
	return c.Class() == bidi.R || c.Class() == bidi.AL
}

// nonASCIISpace is RFC 3454 table C.1.2.
func nonASCIISpace(r rune) bool {
	switch {
	case r == 0x00A0, r == 0x1680, r >= 0x2000 && r <= 0x200B, r == 0x202F, r == 0x205F, r == 0x3000:
		return true
	}
	return false
}

// mappedToNothing is RFC 3454 table B.1.
func mappedToNothing(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x1806, r >= 0x180B && r <= 0x180D, r >= 0x200B && r <= 0x200D,
		r == 0x2060, r >= 0xFE00 && r <= 0xFE0F, r == 0xFEFF:
		return true
	}
	return false
}

// prohibited is SASLprep's prohibited output (RFC 3454 tables C.1.2,
// C.2.1 to C.9) and unassigned code points (table A.1, approximated by
// Go's Unicode tables).
func prohibited(r rune) bool {
	switch {
	case nonASCIISpace(r),
		r < 0x20 || r == 0x7F || (r >= 0x80 && r <= 0x9F), // C.2.1, C.2.2
		r == 0x06DD, r == 0x070F, r == 0x180E, r == 0x200C, r == 0x200D, r == 0x2028, r == 0x2029,
		r >= 0x2060 && r <= 0x2063, r >= 0x206A && r <= 0x206F, r == 0xFEFF, r >= 0xFFF9 && r <= 0xFFFC,
		r >= 0x1D173 && r <= 0x1D17A,
		r >= 0xE000 && r <= 0xF8FF, r >= 0xF0000 && r <= 0xFFFFD, r >= 0x100000 && r <= 0x10FFFD, // C.3
		r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE, // C.4
		r >= 0xD800 && r <= 0xDFFF,                                                     // C.5
		r == 0xFFFD,                                                                    // C.6
		r >= 0x2FF0 && r <= 0x2FFB,                                                     // C.7
		r == 0x0340, r == 0x0341, r == 0x200E, r == 0x200F, r >= 0x202A && r <= 0x202E, // C.8
		r == 0xE0001, r >= 0xE0020 && r <= 0xE007F: // C.9
		return true
	}
	// Every general category but Cn (unassigned), which Go has no table
	// for.
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C)
}
