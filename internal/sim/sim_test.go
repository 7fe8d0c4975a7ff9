package sim

import (
	"flag"
	"os"
	"testing"
	"time"
)

var (
	seedFlag  = flag.Int64("seed", 0, "replay one seed of TestSim with its trace")
	seedsFlag = flag.Int("seeds", 0, "number of seeds TestSim runs (default 1,000; 100 with -short)")
)

// TestSim runs many seeded simulations with faults. A failure names its
// seed; -seed N replays that run exactly and prints its trace.
func TestSim(t *testing.T) {
	if *seedFlag != 0 {
		cfg := seededConfig(*seedFlag)
		cfg.Trace = os.Stdout
		res, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("seed %d: committed %d epochs, %d writes acknowledged, %d assignments", *seedFlag, res.Committed, res.Acked, res.Assignments)
		return
	}
	n := *seedsFlag
	if n == 0 {
		n = 1000
		if testing.Short() {
			n = 100
		}
	}
	start := time.Now()
	ran, terms, deposed := 0, 0, 0
	for seed := int64(1); seed <= int64(n); seed++ {
		res, err := Run(seededConfig(seed))
		if err != nil {
			t.Fatalf("%v\nreplay: go test ./internal/sim -run 'TestSim$' -seed %d", err, seed)
		}
		ran, terms, deposed = ran+1, terms+res.Terms, deposed+res.Deposed
	}
	t.Logf("%d seeded runs in %v: %d coordinator terms, %d actions of deposed coordinators", ran, time.Since(start).Round(time.Millisecond), terms, deposed)
	// The runs must reach the cases the election exists for: leadership
	// changing hands, and a deposed coordinator still acting.
	if ran >= 50 && (terms <= ran || deposed == 0) {
		t.Fatalf("%d runs had %d terms and %d actions of deposed coordinators: the faults never exercised the election", ran, terms, deposed)
	}
}

// seededConfig is the run of one seed: 1 to 3 coordinator candidates, 1
// to 5 workers, faults for 200 ticks (every fourth seed with the harsh
// mix), then 120 ticks to heal.
func seededConfig(seed int64) Config {
	cfg := Config{Seed: seed, Coordinators: 1 + int(seed%3), Workers: 1 + int(seed/3%5), Ticks: 200, Heal: 120, Faults: DefaultFaults()}
	if seed%4 == 0 {
		cfg.Faults = HarshFaults()
	}
	return cfg
}
