package nexmark

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata")

// TestFirstEvents pins the start of the default stream: its text is the
// generator's specification in action (kinds by position, ids from the
// event number, hot ids, times advancing by 100µs).
func TestFirstEvents(t *testing.T) {
	g := NewGenerator(Config{Seed: 1})
	var b strings.Builder
	for _, e := range g.NextN(60) {
		var v strings.Builder
		e.appendValues(&v)
		b.WriteString(e.Kind.String() + " " + v.String() + "\n")
	}
	golden(t, "first_events.txt", b.String())
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the generated text (run with -rewrite to accept):\n%s", path, got)
	}
}

// TestStreamShape checks the model's invariants over a long stream.
func TestStreamShape(t *testing.T) {
	cfg := Config{Seed: 7}
	g := NewGenerator(cfg)
	const n = 50 * 400
	var counts [3]int
	nextPerson, nextAuction := int64(firstPersonID), int64(firstAuctionID)
	hotAuctionBids, hotChannelBids, withChannelID := 0, 0, 0
	for i := range uint64(n) {
		e := g.Next()
		if e.Number != i {
			t.Fatalf("event %d numbered %d in an in-order stream", i, e.Number)
		}
		counts[e.Kind]++
		want := KindBid
		switch i % 50 {
		case 0:
			want = KindPerson
		case 1, 2, 3:
			want = KindAuction
		}
		if e.Kind != want {
			t.Fatalf("event %d is a %s, want a %s", i, e.Kind, want)
		}
		at := g.Time(i)
		switch e.Kind {
		case KindPerson:
			p := e.Person
			if p.ID != nextPerson {
				t.Fatalf("event %d: person id %d, want %d", i, p.ID, nextPerson)
			}
			nextPerson++
			if !p.DateTime.Equal(at) || !strings.Contains(p.EmailAddress, "@") || len(p.CreditCard) != 19 {
				t.Fatalf("event %d: bad person %+v", i, p)
			}
		case KindAuction:
			a := e.Auction
			if a.ID != nextAuction {
				t.Fatalf("event %d: auction id %d, want %d", i, a.ID, nextAuction)
			}
			nextAuction++
			if !a.DateTime.Equal(at) || !a.Expires.After(a.DateTime) || a.Reserve < a.InitialBid ||
				a.Category < firstCategory || a.Category >= firstCategory+numCategories ||
				a.Seller < firstPersonID || a.Seller >= nextPerson+personIDLead {
				t.Fatalf("event %d: bad auction %+v", i, a)
			}
			if a.Expires.Sub(a.DateTime) > 2*time.Duration(100*50/3)*100*time.Microsecond {
				t.Fatalf("event %d: auction lasts %v", i, a.Expires.Sub(a.DateTime))
			}
		case KindBid:
			d := e.Bid
			if !d.DateTime.Equal(at) || d.Price < 100 || d.Price > 100_000_000 {
				t.Fatalf("event %d: bad bid %+v", i, d)
			}
			// Bids name recent auctions, up to the lead ahead.
			if d.Auction < max(nextAuction-1-100, firstAuctionID) && d.Auction%hotIDRatio != 0 || d.Auction >= nextAuction+auctionIDLead {
				t.Fatalf("event %d: bid on auction %d, next auction %d", i, d.Auction, nextAuction)
			}
			if d.Bidder < firstPersonID || d.Bidder >= nextPerson+personIDLead {
				t.Fatalf("event %d: bidder %d, next person %d", i, d.Bidder, nextPerson)
			}
			if d.Auction == firstAuctionID+hot(nextAuction-1-firstAuctionID) {
				hotAuctionBids++
			}
			if len(d.Channel) < 8 || d.Channel[:8] != "channel-" {
				hotChannelBids++
				if d.URL != hotChannelURL(indexOf(hotChannels, d.Channel)) {
					t.Fatalf("event %d: hot channel %s with URL %s", i, d.Channel, d.URL)
				}
			} else if strings.Contains(d.URL, "&channel_id=") {
				withChannelID++
			}
		}
	}
	if counts != [3]int{n / 50, 3 * n / 50, 46 * n / 50} {
		t.Errorf("kinds: %v", counts)
	}
	bids := counts[KindBid]
	// Half of the bids go to the hot auction, half through hot channels,
	// nine in ten of the others carry a channel id: allow a few percent.
	near := func(what string, got, want int) {
		if d := float64(got-want) / float64(want); d < -0.05 || d > 0.05 {
			t.Errorf("%s: %d, want about %d", what, got, want)
		}
	}
	near("bids on the hot auction", hotAuctionBids, bids/2)
	near("bids through hot channels", hotChannelBids, bids/2)
	near("other bids whose URL has a channel id", withChannelID, (bids-hotChannelBids)*9/10)
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// TestDeterministic: the same configuration gives the same stream; any
// event can be produced on its own; another seed gives another stream.
func TestDeterministic(t *testing.T) {
	a, b := NewGenerator(Config{Seed: 3}), NewGenerator(Config{Seed: 3})
	other := NewGenerator(Config{Seed: 4})
	same := 0
	for i := range uint64(500) {
		x, y, z := a.Next(), b.Next(), other.Event(i)
		if x != y || x != a.Event(i) {
			t.Fatalf("event %d differs between equal generators", i)
		}
		if x == z {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d events are the same under another seed", same)
	}
}

// TestOutOfOrder: each group of OutOfOrderGroupSize positions holds the
// group's events, shuffled, so an event is at most size − 1 delays late.
func TestOutOfOrder(t *testing.T) {
	const size = 7
	g := NewGenerator(Config{Seed: 1, EventsPerSecond: 20, OutOfOrderGroupSize: size})
	var latest time.Time
	inOrder := true
	for group := range 100 {
		seen := map[uint64]bool{}
		for range size {
			e := g.Next()
			if e.Number/size != uint64(group) || seen[e.Number] {
				t.Fatalf("group %d emitted event %d", group, e.Number)
			}
			seen[e.Number] = true
			at := g.Time(e.Number)
			if at.Before(latest) {
				inOrder = false
				if late := latest.Sub(at); late > (size-1)*50*time.Millisecond {
					t.Fatalf("event %d is %v late", e.Number, late)
				}
			} else {
				latest = at
			}
		}
	}
	if inOrder {
		t.Error("the stream came in order")
	}
}

// TestInserts checks the statements' shape: one INSERT per table, in the
// order person, auction, bid, with quotes doubled.
func TestInserts(t *testing.T) {
	g := NewGenerator(Config{Seed: 1})
	events := g.NextN(100)
	events[0].Person.Name = "O'Brien"
	stmts := Inserts(events)
	if len(stmts) != 3 {
		t.Fatalf("%d statements", len(stmts))
	}
	for i, table := range []string{"person", "auction", "bid"} {
		if !strings.HasPrefix(stmts[i], "INSERT INTO "+table+" VALUES (") {
			t.Errorf("statement %d: %.40s", i, stmts[i])
		}
	}
	if !strings.Contains(stmts[0], "'O''Brien'") {
		t.Errorf("quote not doubled: %.80s", stmts[0])
	}
	if got := strings.Count(stmts[2], "), ("); got != 91 {
		t.Errorf("bid rows: %d separators, want 91", got)
	}
	if Inserts(nil) != nil {
		t.Error("no events must give no statements")
	}
}
