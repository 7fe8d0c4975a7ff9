package cluster

import (
	"fmt"
	"testing"
)

func TestPlaceIsBalancedAndTotal(t *testing.T) {
	for n := 1; n <= 7; n++ {
		members := map[NodeID]LeaseID{}
		for i := 1; i <= n; i++ {
			members[NodeID(fmt.Sprintf("w%d", i))] = LeaseID(i)
		}
		a := Place(members)
		count := map[NodeID]int{}
		for b, o := range a.Owner {
			if _, ok := members[o]; !ok {
				t.Fatalf("%d members: bucket %d placed on %q", n, b, o)
			}
			count[o]++
		}
		lo, hi := NumBuckets, 0
		for _, c := range count {
			lo, hi = min(lo, c), max(hi, c)
		}
		if len(count) != n || hi-lo > 1 {
			t.Fatalf("%d members: bucket counts %v are not balanced", n, count)
		}
		if b := Place(members); b.Owner != a.Owner {
			t.Fatalf("%d members: placement is not deterministic", n)
		}
	}
}

func TestAssignmentString(t *testing.T) {
	a := Place(map[NodeID]LeaseID{"w1": 1, "w2": 2, "w3": 3})
	if got, want := a.String(), "w1:0-85 w2:86-170 w3:171-255"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
