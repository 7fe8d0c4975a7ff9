package memgov

import "fmt"

// FormatBytes renders n bytes in the largest of kB, MB, GB, TB that n
// reaches (multiples of 1024, as PostgreSQL's memory units): whole when
// the unit divides n, else to a tenth.
func FormatBytes(n int64) string {
	units := []struct {
		name string
		size int64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}}
	for _, u := range units {
		if n >= u.size {
			if n%u.size == 0 {
				return fmt.Sprintf("%d%s", n/u.size, u.name)
			}
			return fmt.Sprintf("%.1f%s", float64(n)/float64(u.size), u.name)
		}
	}
	return fmt.Sprintf("%dB", n)
}
