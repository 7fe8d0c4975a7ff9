package control

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rockstream/rockstream/internal/cluster"
)

// Submitter takes writes into one term of the coordinator:
// CoordinatorHost.Submit.
type Submitter interface {
	Submit(ctx context.Context, writes []cluster.Write) (Receipt, error)
}

// Client submits the keyed-sum workload's writes to the coordinator and
// waits for their acknowledgements, which reach it as the protocol's
// client node (cluster.ClientID): attach Receive to the network under
// that ID.
//
// Each write is submitted once: a write whose acknowledgement does not
// come in time has an unknown outcome (it may still commit), and sending
// it again could commit it twice, since a new coordinator incarnation does
// not know the writes an earlier one committed. The receipt of the
// submission is what WriteOutcome needs to learn the outcome later. Write
// IDs must be unique.
type Client struct {
	coord Submitter

	mu      sync.Mutex
	waiting map[uint64]chan struct{}
}

// NewClient returns a client submitting to coord.
func NewClient(coord Submitter) *Client {
	return &Client{coord: coord, waiting: map[uint64]chan struct{}{}}
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

// ErrInFlight is Submit's error when a write's ID is being waited for
// already: its first submission's receipt is the one that applies.
var ErrInFlight = errors.New("control: a write of that ID is being submitted already")

// Submit hands writes to the coordinator and waits until each is
// acknowledged or ctx ends; it returns the submission's receipt and the
// IDs acknowledged, in the order of writes. The others have an unknown
// outcome. It fails, having submitted nothing, when the coordinator does
// not lead (ErrNotLeading) or a write's ID is being waited for already
// (ErrInFlight). taken, when set, is called with the receipt as soon as
// the coordinator has taken the writes, before the wait.
func (c *Client) Submit(ctx context.Context, writes []cluster.Write, taken func(Receipt)) (Receipt, []uint64, error) {
	chans := make([]chan struct{}, len(writes))
	c.mu.Lock()
	for _, w := range writes {
		if c.waiting[w.ID] != nil {
			c.mu.Unlock()
			return Receipt{}, nil, fmt.Errorf("%w: %d", ErrInFlight, w.ID)
		}
	}
	for i, w := range writes {
		chans[i] = make(chan struct{})
		c.waiting[w.ID] = chans[i]
	}
	c.mu.Unlock()
	receipt, err := c.coord.Submit(ctx, writes)
	if err != nil {
		c.mu.Lock()
		for i, w := range writes {
			if c.waiting[w.ID] == chans[i] {
				delete(c.waiting, w.ID)
			}
		}
		c.mu.Unlock()
		return Receipt{}, nil, err
	}
	if taken != nil {
		taken(receipt)
	}
	var acked []uint64
	for i, w := range writes {
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
	return receipt, acked, nil
}
