package session

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultWorkMem is work_mem's default, PostgreSQL's.
const DefaultWorkMem = "4MB"

// Bounds of work_mem in kB, PostgreSQL's.
const (
	minWorkMemKB = 64
	maxWorkMemKB = math.MaxInt32
)

// ParseMemory parses a memory setting as PostgreSQL does: an integer
// number of defaultUnit, or a number with one of the units B, kB, MB, GB,
// TB (case-sensitive, spaces allowed between). It returns bytes.
func ParseMemory(v string, defaultUnit int64) (int64, error) {
	s := strings.TrimSpace(v)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || (i == 0 && (s[i] == '-' || s[i] == '+'))) {
		i++
	}
	num, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, &invalidSetting{}
	}
	unit := defaultUnit
	switch strings.TrimSpace(s[i:]) {
	case "":
	case "B":
		unit = 1
	case "kB":
		unit = 1 << 10
	case "MB":
		unit = 1 << 20
	case "GB":
		unit = 1 << 30
	case "TB":
		unit = 1 << 40
	default:
		return 0, &invalidSetting{hint: `Valid units for this parameter are "B", "kB", "MB", "GB", and "TB".`}
	}
	b := num * float64(unit)
	if b > math.MaxInt64/2 {
		b = math.MaxInt64 / 2
	}
	return int64(math.Round(b)), nil
}

// WorkMemBytes returns work_mem's value v in bytes (the default's when v
// does not parse).
func WorkMemBytes(v string) int64 {
	n, err := ParseMemory(v, 1<<10)
	if err != nil {
		n, _ = ParseMemory(DefaultWorkMem, 1<<10)
	}
	return n
}

func checkWorkMem(v string) error {
	n, err := ParseMemory(v, 1<<10)
	if err != nil {
		return err
	}
	if kb := n >> 10; kb < minWorkMemKB || kb > maxWorkMemKB {
		return &invalidSetting{outOfRange: true,
			rangeMsg: fmt.Sprintf("%d kB is outside the valid range for parameter %%q (%d .. %d)", kb, minWorkMemKB, maxWorkMemKB)}
	}
	return nil
}

// TempFileLimitBytes returns temp_file_limit's value v in bytes, -1 for
// none (PostgreSQL's default, and what a value that does not parse
// gives).
func TempFileLimitBytes(v string) int64 {
	n, err := ParseMemory(v, 1<<10)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

func checkTempFileLimit(v string) error {
	n, err := ParseMemory(v, 1<<10)
	if err != nil {
		return err
	}
	if kb := n >> 10; n != -1<<10 && (n < 0 || kb > maxWorkMemKB) {
		return &invalidSetting{outOfRange: true,
			rangeMsg: fmt.Sprintf("%d kB is outside the valid range for parameter %%q (-1 .. %d)", n/1024, maxWorkMemKB)}
	}
	return nil
}
