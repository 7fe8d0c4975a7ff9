package zset

import (
	"strconv"
)

func itoa(n int64) string   { return strconv.FormatInt(n, 10) }
func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
func quote(s string) string { return strconv.Quote(s) }

// sign maps a comparison result to -1, 0 or 1.
func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}
