package sim

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/rockstream/rockstream/internal/cluster"
)

// TestProtocolTraces walks testdata/protocol.txt: each "run" prints the
// full trace of a small run, so the file reads as the protocol step by
// step. Regenerate with -rewrite.
//
//	run seed=N [coordinators=N] workers=N ticks=N [heal=N] [faults] [crash=NODE@TICK:DOWN]... [cut=NODE@TICK:FOR]...
//
// Lease renewals are left out of the trace to keep it readable.
func TestProtocolTraces(t *testing.T) {
	datadriven.RunTest(t, "testdata/protocol.txt", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "run" {
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
		cfg := Config{}
		for _, a := range d.CmdArgs {
			val := ""
			if len(a.Vals) > 0 {
				val = a.Vals[0]
			}
			switch a.Key {
			case "seed":
				cfg.Seed, _ = strconv.ParseInt(val, 10, 64)
			case "workers":
				cfg.Workers, _ = strconv.Atoi(val)
			case "ticks":
				cfg.Ticks, _ = strconv.ParseInt(val, 10, 64)
			case "heal":
				cfg.Heal, _ = strconv.ParseInt(val, 10, 64)
			case "faults":
				cfg.Faults = DefaultFaults()
			case "coordinators":
				cfg.Coordinators, _ = strconv.Atoi(val)
			case "crash", "cut":
				for _, v := range a.Vals {
					var c Crash
					var node string
					if _, err := fmt.Sscanf(strings.NewReplacer("@", " ", ":", " ").Replace(v), "%s %d %d", &node, &c.Tick, &c.DownFor); err != nil {
						d.Fatalf(t, "%s=%s: %v", a.Key, v, err)
					}
					c.Node = cluster.NodeID(node)
					if a.Key == "crash" {
						cfg.Crashes = append(cfg.Crashes, c)
					} else {
						cfg.Cuts = append(cfg.Cuts, c)
					}
				}
			default:
				d.Fatalf(t, "unknown argument %q", a.Key)
			}
		}
		var trace strings.Builder
		cfg.Trace = &trace
		res, err := Run(cfg)
		var out strings.Builder
		sc := bufio.NewScanner(strings.NewReader(trace.String()))
		for sc.Scan() {
			if !strings.Contains(sc.Text(), "keepalive") {
				out.WriteString(sc.Text() + "\n")
			}
		}
		if err != nil {
			fmt.Fprintf(&out, "violation: %v\n", err)
		} else {
			fmt.Fprintf(&out, "end: committed=%d acked=%d assignments=%d\n", res.Committed, res.Acked, res.Assignments)
		}
		return out.String()
	})
}
