package sim

import (
	"math/rand"

	"github.com/rockstream/rockstream/internal/cluster"
)

// network carries messages between nodes with seeded faults: each message
// is dropped, delayed by up to maxDelay ticks, or duplicated; messages due
// at one tick are delivered in a random order.
type network struct {
	rng      *rand.Rand
	inFlight []envelope
}

type envelope struct {
	msg cluster.Message
	// node receives the message: msg.To, or for the coordinator the
	// candidate the sender reached.
	node cluster.NodeID
	due  int64
	// toIncarnation, when not -1, addresses one incarnation of the
	// receiver: a client's connection does not outlive the process it
	// reached.
	toIncarnation int
}

func (n *network) send(e envelope, now int64, f Faults) (dropped bool, copies int) {
	if f.Drop > 0 && n.rng.Float64() < f.Drop {
		return true, 0
	}
	copies = 1
	if f.Duplicate > 0 && n.rng.Float64() < f.Duplicate {
		copies = 2
	}
	for i := 0; i < copies; i++ {
		c := e
		c.due = now
		if f.MaxDelay > 0 {
			c.due += n.rng.Int63n(f.MaxDelay + 1)
		}
		n.inFlight = append(n.inFlight, c)
	}
	return false, copies
}

// takeDue removes one message due by now, chosen at random, and reports
// whether there was one.
func (n *network) takeDue(now int64, held func(cluster.NodeID) bool) (envelope, bool) {
	var due []int
	for i, e := range n.inFlight {
		if e.due <= now && !held(e.node) {
			due = append(due, i)
		}
	}
	if len(due) == 0 {
		return envelope{}, false
	}
	i := due[n.rng.Intn(len(due))]
	e := n.inFlight[i]
	n.inFlight = append(n.inFlight[:i], n.inFlight[i+1:]...)
	return e, true
}
