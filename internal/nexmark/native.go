package nexmark

import "github.com/rockstream/rockstream"

// BatchWriter adds events to an embedded instance's rockstream.Batch as
// rows of the person, auction and bid tables (Tables, in their column
// order), each column given as its typed Go value through a
// rockstream.RowWriter: no SQL text and no value boxed into an interface.
type BatchWriter struct {
	batch                *rockstream.Batch
	person, auction, bid *rockstream.RowWriter
}

// columnCounts is the number of columns of each kind's table.
var columnCounts = [...]int{KindPerson: 8, KindAuction: 10, KindBid: 7}

// NewBatchWriter returns a writer of events into batch, whose instance
// must have the three event tables.
func NewBatchWriter(batch *rockstream.Batch) (*BatchWriter, error) {
	w := BatchWriter{batch: batch}
	var err error
	if w.person, err = batch.Writer("person"); err != nil {
		return nil, err
	}
	if w.auction, err = batch.Writer("auction"); err != nil {
		return nil, err
	}
	if w.bid, err = batch.Writer("bid"); err != nil {
		return nil, err
	}
	return &w, nil
}

// Insert adds the insertion of each event's row to the batch, in order.
func (w *BatchWriter) Insert(events []Event) error {
	values := 0
	for i := range events {
		values += columnCounts[events[i].Kind]
	}
	w.batch.Grow(len(events), values)
	for i := range events {
		if err := w.insert(&events[i]); err != nil {
			return err
		}
	}
	return nil
}

func (w *BatchWriter) insert(e *Event) error {
	switch e.Kind {
	case KindPerson:
		p := &e.Person
		return w.person.Int64(p.ID).String(p.Name).String(p.EmailAddress).String(p.CreditCard).
			String(p.City).String(p.State).Time(p.DateTime).String(p.Extra).Insert()
	case KindAuction:
		a := &e.Auction
		return w.auction.Int64(a.ID).String(a.ItemName).String(a.Description).Int64(a.InitialBid).
			Int64(a.Reserve).Time(a.DateTime).Time(a.Expires).Int64(a.Seller).Int64(a.Category).
			String(a.Extra).Insert()
	}
	d := &e.Bid
	return w.bid.Int64(d.Auction).Int64(d.Bidder).Int64(d.Price).String(d.Channel).String(d.URL).
		Time(d.DateTime).String(d.Extra).Insert()
}
