package types

import "testing"

// TestRandomMatchesPostgres checks the numbers random() draws after
// setseed against the ones PostgreSQL 15 draws (select setseed(x);
// select random(), random()).
func TestRandomMatchesPostgres(t *testing.T) {
	for _, tc := range []struct {
		seed float64
		want []float64
	}{
		{0.5, []float64{0.9851677175347999, 0.825301858027981}},
		{-0.25, []float64{0.5553213340039351}},
		{1, []float64{0.3978842227698167}},
	} {
		var r Random
		if err := r.SetSeed(tc.seed); err != nil {
			t.Fatal(err)
		}
		for i, w := range tc.want {
			if got := r.Float64(); got != w {
				t.Errorf("setseed(%v): random() #%d = %v, want %v", tc.seed, i+1, got, w)
			}
		}
	}
	var r Random
	if err := r.SetSeed(2); err == nil || err.Error() != "setseed parameter 2 is out of allowed range [-1,1]" {
		t.Errorf("setseed(2): %v", err)
	}
	for range 1000 {
		if f := r.Float64(); f < 0 || f >= 1 {
			t.Fatalf("random() = %v", f)
		}
	}
}
