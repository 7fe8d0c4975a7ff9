package memgov

import (
	"runtime/debug"
	"testing"
)

func TestSetGCPercent(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	if got := SetGCPercent(250); got != 250 {
		t.Fatalf("SetGCPercent(250) = %d", got)
	}
	if v := debug.SetGCPercent(250); v != 250 {
		t.Fatalf("GOGC in force = %d, want 250", v)
	}
	// GOGC in the environment wins: the value in force stays.
	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	if got := SetGCPercent(400); got != 150 {
		t.Fatalf("with GOGC=150 set, SetGCPercent(400) = %d", got)
	}
	if v := debug.SetGCPercent(150); v != 150 {
		t.Fatalf("GOGC in force = %d, want 150", v)
	}
}
