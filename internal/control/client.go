package control

import (
	"context"
	"sync"

	"github.com/rockstream/rockstream/internal/cluster"
)

// Client submits the keyed-sum workload's writes to the coordinator as the
// protocol's client node (cluster.ClientID) and waits for their
// acknowledgements. Attach Receive to the network under cluster.ClientID.
//
// Each write is sent once: a write whose acknowledgement does not come in
// time has an unknown outcome (it may still commit), and sending it again
// could commit it twice, since a new coordinator incarnation does not know
// the writes an earlier one committed. Write IDs must be unique.
type Client struct {
	net Network

	mu      sync.Mutex
	waiting map[uint64]chan struct{}
}

// NewClient returns a client sending through net.
func NewClient(net Network) *Client {
	return &Client{net: net, waiting: map[uint64]chan struct{}{}}
}

// Receive takes the coordinator's acknowledgements; it never blocks.
func (c *Client) Receive(m cluster.Message) {
	if m.Kind != cluster.MsgAck {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range m.WriteIDs {
		if ch := c.waiting[id]; ch != nil {
			close(ch)
			delete(c.waiting, id)
		}
	}
}

// Submit sends writes and waits until each is acknowledged or ctx ends;
// it returns the IDs acknowledged, in the order of writes. The others have
// an unknown outcome. A write whose ID is being waited for already is not
// sent again.
func (c *Client) Submit(ctx context.Context, writes []cluster.Write) []uint64 {
	chans := make([]chan struct{}, len(writes))
	c.mu.Lock()
	for i, w := range writes {
		if c.waiting[w.ID] != nil {
			continue
		}
		chans[i] = make(chan struct{})
		c.waiting[w.ID] = chans[i]
	}
	c.mu.Unlock()
	for i, w := range writes {
		if chans[i] != nil {
			c.net.Send(cluster.Message{Kind: cluster.MsgWrite, From: cluster.ClientID, To: cluster.CoordinatorID, Write: w})
		}
	}
	var acked []uint64
	for i, w := range writes {
		if chans[i] == nil {
			continue
		}
		select {
		case <-chans[i]:
			acked = append(acked, w.ID)
			continue
		case <-ctx.Done():
		}
		c.mu.Lock()
		select {
		case <-chans[i]:
			acked = append(acked, w.ID)
		default:
			delete(c.waiting, w.ID)
		}
		c.mu.Unlock()
	}
	return acked
}
