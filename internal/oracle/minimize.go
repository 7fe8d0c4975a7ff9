package oracle

import "time"

// Minimize shrinks a failing script: it removes chunks of statements
// (halves, then quarters, down to single statements) as long as the rest
// still fails, and returns the smallest failing script it found before
// the deadline. fails reports whether a script fails; Minimize assumes
// stmts does.
func Minimize(stmts []Statement, fails func([]Statement) bool, deadline time.Time) []Statement {
	cur := stmts
	for chunk := len(cur) / 2; chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk <= len(cur); {
			if time.Now().After(deadline) {
				return cur
			}
			cand := append(append([]Statement{}, cur[:i]...), cur[i+chunk:]...)
			if fails(cand) {
				cur = cand
			} else {
				i += chunk
			}
		}
		if chunk > len(cur)/2 {
			chunk = len(cur) // the script shrank: restart from its halves
		}
	}
	return cur
}
