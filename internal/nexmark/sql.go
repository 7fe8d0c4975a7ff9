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

// Values returns the event's row, in its table's column order: int64,
// string and time.Time values, for a program that inserts events without
// SQL text (rockstream.Batch).
func (e Event) Values() []any {
	switch e.Kind {
	case KindPerson:
		p := e.Person
		return []any{p.ID, p.Name, p.EmailAddress, p.CreditCard, p.City, p.State, p.DateTime, p.Extra}
	case KindAuction:
		a := e.Auction
		return []any{a.ID, a.ItemName, a.Description, a.InitialBid, a.Reserve, a.DateTime, a.Expires, a.Seller, a.Category, a.Extra}
	}
	d := e.Bid
	return []any{d.Auction, d.Bidder, d.Price, d.Channel, d.URL, d.DateTime, d.Extra}
}

// appendValues writes the event's row as a parenthesised VALUES list, in
// its table's column order.
func (e Event) appendValues(b *strings.Builder) {
	w := valuesWriter{b: b}
	b.WriteByte('(')
	for _, v := range e.Values() {
		switch x := v.(type) {
		case int64:
			w.int(x)
		case string:
			w.text(x)
		case time.Time:
			w.time(x)
		}
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
