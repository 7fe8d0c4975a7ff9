package sim

import (
	"flag"
	"os"
	"testing"
	"time"
)

var (
	seedFlag  = flag.Int64("seed", 0, "replay one seed of TestSim with its trace")
	seedsFlag = flag.Int("seeds", 0, "number of seeds TestSim runs (default: as many as fit its time budget)")
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
	n, budget := *seedsFlag, 40*time.Second
	if n == 0 {
		n = 1000
		if testing.Short() {
			n = 100
		}
	}
	start := time.Now()
	ran := 0
	for seed := int64(1); seed <= int64(n); seed++ {
		if *seedsFlag == 0 && time.Since(start) > budget {
			break
		}
		if _, err := Run(seededConfig(seed)); err != nil {
			t.Fatalf("%v\nreplay: go test ./internal/sim -run 'TestSim$' -seed %d", err, seed)
		}
		ran++
	}
	t.Logf("%d seeded runs in %v", ran, time.Since(start).Round(time.Millisecond))
}

// seededConfig is the run of one seed: 2 to 4 workers, faults for 200
// ticks, then 80 ticks to heal.
func seededConfig(seed int64) Config {
	return Config{Seed: seed, Workers: 2 + int(seed%3), Ticks: 200, Heal: 80, Faults: DefaultFaults()}
}
