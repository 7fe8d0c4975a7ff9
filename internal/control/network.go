package control

import (
	"encoding/json"
	"sync"

	"github.com/rockstream/rockstream/internal/cluster"
)

// Network carries the protocol's messages between nodes. Delivery is best
// effort: the protocol resends what matters, so Send may drop a message
// (the receiver is unknown, down or too far behind) but must not block
// for long.
type Network interface {
	Send(m cluster.Message)
}

// Receiver takes a message addressed to a node; it must not block.
type Receiver func(m cluster.Message)

// LocalNetwork is a Network between nodes in one process. Each message is
// encoded and decoded on the way, so sender and receiver share no memory,
// as over a real connection.
type LocalNetwork struct {
	mu struct {
		sync.Mutex
		nodes map[cluster.NodeID]Receiver
	}
}

// NewLocalNetwork returns a network without nodes.
func NewLocalNetwork() *LocalNetwork {
	n := &LocalNetwork{}
	n.mu.nodes = map[cluster.NodeID]Receiver{}
	return n
}

// Attach makes r receive the messages to id, in place of any receiver
// attached before.
func (n *LocalNetwork) Attach(id cluster.NodeID, r Receiver) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.mu.nodes[id] = r
}

// Detach stops delivering messages to id.
func (n *LocalNetwork) Detach(id cluster.NodeID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.mu.nodes, id)
}

// Send implements Network; a message to a node not attached is lost.
func (n *LocalNetwork) Send(m cluster.Message) {
	n.mu.Lock()
	r := n.mu.nodes[m.To]
	n.mu.Unlock()
	if r == nil {
		return
	}
	data, err := json.Marshal(m)
	if err != nil {
		return
	}
	var c cluster.Message
	if json.Unmarshal(data, &c) != nil {
		return
	}
	r(c)
}
