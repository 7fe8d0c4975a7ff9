package nexmark

import (
	"strconv"
	"strings"
	"time"
)

// Inserts returns the INSERT statements that add events to the tables: one
// multi-row INSERT per table that has events, in the order person,
// auction, bid (so that within a transaction a bid never precedes the
// auction it names). The text is plain SQL that PostgreSQL and RockStream
// both accept.
func Inserts(events []Event) []string {
	var tables [3]strings.Builder
	for _, e := range events {
		b := &tables[e.Kind]
		if b.Len() == 0 {
			b.WriteString("INSERT INTO ")
			b.WriteString(e.Kind.String())
			b.WriteString(" VALUES ")
		} else {
			b.WriteString(", ")
		}
		e.appendValues(b)
	}
	var out []string
	for i := range tables {
		if tables[i].Len() > 0 {
			out = append(out, tables[i].String())
		}
	}
	return out
}

// appendValues writes the event's row as a parenthesised VALUES list, in
// its table's column order.
func (e Event) appendValues(b *strings.Builder) {
	w := valuesWriter{b: b}
	b.WriteByte('(')
	switch e.Kind {
	case KindPerson:
		p := e.Person
		w.int(p.ID)
		w.text(p.Name)
		w.text(p.EmailAddress)
		w.text(p.CreditCard)
		w.text(p.City)
		w.text(p.State)
		w.time(p.DateTime)
		w.text(p.Extra)
	case KindAuction:
		a := e.Auction
		w.int(a.ID)
		w.text(a.ItemName)
		w.text(a.Description)
		w.int(a.InitialBid)
		w.int(a.Reserve)
		w.time(a.DateTime)
		w.time(a.Expires)
		w.int(a.Seller)
		w.int(a.Category)
		w.text(a.Extra)
	case KindBid:
		d := e.Bid
		w.int(d.Auction)
		w.int(d.Bidder)
		w.int(d.Price)
		w.text(d.Channel)
		w.text(d.URL)
		w.time(d.DateTime)
		w.text(d.Extra)
	}
	b.WriteByte(')')
}

// valuesWriter writes comma-separated SQL literals.
type valuesWriter struct {
	b     *strings.Builder
	count int
}

func (w *valuesWriter) sep() {
	if w.count > 0 {
		w.b.WriteString(", ")
	}
	w.count++
}

func (w *valuesWriter) int(v int64) {
	w.sep()
	w.b.WriteString(strconv.FormatInt(v, 10))
}

func (w *valuesWriter) text(s string) {
	w.sep()
	w.b.WriteByte('\'')
	w.b.WriteString(strings.ReplaceAll(s, "'", "''"))
	w.b.WriteByte('\'')
}

// timeLayout is PostgreSQL's timestamp input with microseconds.
const timeLayout = "2006-01-02 15:04:05.999999"

func (w *valuesWriter) time(t time.Time) {
	w.sep()
	w.b.WriteString("TIMESTAMP '")
	w.b.WriteString(t.UTC().Format(timeLayout))
	w.b.WriteByte('\'')
}
