package nexmark

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"time"
)

// Proportions of the event kinds: of every totalProportion consecutive
// events, personProportion are persons, then auctionProportion auctions,
// then bids.
const (
	personProportion  = 1
	auctionProportion = 3
	bidProportion     = 46
	totalProportion   = personProportion + auctionProportion + bidProportion
)

// Identifier bases and the generator's fixed parameters.
const (
	firstPersonID  = 1000
	firstAuctionID = 1000
	firstCategory  = 10
	numCategories  = 5
	// personIDLead and auctionIDLead let bids and auctions refer to
	// people and auctions a little ahead of the ones created so far.
	personIDLead  = 10
	auctionIDLead = 10
	// hotIDRatio: hot auctions, sellers and bidders are multiples of it.
	hotIDRatio = 100
	// numChannels is the number of ordinary (not hot) channels.
	numChannels = 10000
)

// Kind is the kind of an event.
type Kind uint8

// The event kinds.
const (
	KindPerson Kind = iota
	KindAuction
	KindBid
)

func (k Kind) String() string {
	switch k {
	case KindPerson:
		return "person"
	case KindAuction:
		return "auction"
	case KindBid:
		return "bid"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Person is a new person: a row of table person.
type Person struct {
	ID           int64
	Name         string
	EmailAddress string
	CreditCard   string
	City         string
	State        string
	DateTime     time.Time
	Extra        string
}

// Auction is a new auction: a row of table auction.
type Auction struct {
	ID          int64
	ItemName    string
	Description string
	InitialBid  int64
	Reserve     int64
	DateTime    time.Time
	Expires     time.Time
	Seller      int64
	Category    int64
	Extra       string
}

// Bid is a bid on an auction: a row of table bid.
type Bid struct {
	Auction  int64
	Bidder   int64
	Price    int64
	Channel  string
	URL      string
	DateTime time.Time
	Extra    string
}

// Event is one event of the stream. Kind says which of Person, Auction and
// Bid is set.
type Event struct {
	// Number is the event's number: its position in the stream when
	// emitted in order. It decides the event's kind, ids and time.
	Number  uint64
	Kind    Kind
	Person  Person
	Auction Auction
	Bid     Bid
}

// Config parameterises a stream. The zero value of a field means its
// default (DefaultConfig).
type Config struct {
	// Seed selects the stream.
	Seed uint64
	// EventsPerSecond is the event rate in event time: date_time advances
	// by 1s / EventsPerSecond per event. Default 10,000.
	EventsPerSecond int
	// BaseTime is the date_time of event 0. Default 2026-01-01 00:00 UTC.
	BaseTime time.Time
	// OutOfOrderGroupSize, when above 1, emits each group of that many
	// consecutive events in a shuffled order (fixed by Seed). Default 1
	// (in order).
	OutOfOrderGroupSize int
	// NumActivePeople is how many of the latest people bid and sell
	// (besides the hot ones). Default 1,000.
	NumActivePeople int
	// NumInFlightAuctions is how many of the latest auctions receive bids
	// (besides the hot ones); it also sets how long auctions last.
	// Default 100.
	NumInFlightAuctions int
	// HotAuctionRatio, HotBiddersRatio and HotSellersRatio: a bid goes to
	// a hot auction with probability 1 − 1/HotAuctionRatio, and so on.
	// Defaults 2, 4 and 4.
	HotAuctionRatio int
	HotBiddersRatio int
	HotSellersRatio int
	// HotChannelsRatio: a bid comes through a hot channel with
	// probability 1 − 1/HotChannelsRatio. Default 2.
	HotChannelsRatio int
	// AvgPersonBytes, AvgAuctionBytes and AvgBidBytes are the average
	// sizes that the extra field pads events to. Defaults 200, 500, 100.
	AvgPersonBytes  int
	AvgAuctionBytes int
	AvgBidBytes     int
}

// DefaultConfig returns the benchmark's standard parameters.
func DefaultConfig() Config {
	return Config{
		EventsPerSecond:     10000,
		BaseTime:            time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		OutOfOrderGroupSize: 1,
		NumActivePeople:     1000,
		NumInFlightAuctions: 100,
		HotAuctionRatio:     2,
		HotBiddersRatio:     4,
		HotSellersRatio:     4,
		HotChannelsRatio:    2,
		AvgPersonBytes:      200,
		AvgAuctionBytes:     500,
		AvgBidBytes:         100,
	}
}

// withDefaults fills the zero fields of c from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&c.EventsPerSecond, d.EventsPerSecond)
	set(&c.OutOfOrderGroupSize, d.OutOfOrderGroupSize)
	set(&c.NumActivePeople, d.NumActivePeople)
	set(&c.NumInFlightAuctions, d.NumInFlightAuctions)
	set(&c.HotAuctionRatio, d.HotAuctionRatio)
	set(&c.HotBiddersRatio, d.HotBiddersRatio)
	set(&c.HotSellersRatio, d.HotSellersRatio)
	set(&c.HotChannelsRatio, d.HotChannelsRatio)
	set(&c.AvgPersonBytes, d.AvgPersonBytes)
	set(&c.AvgAuctionBytes, d.AvgAuctionBytes)
	set(&c.AvgBidBytes, d.AvgBidBytes)
	if c.BaseTime.IsZero() {
		c.BaseTime = d.BaseTime
	}
	return c
}

// Generator produces a stream of events. It is not safe for concurrent
// use; Event is a pure function of the Config and may be called from
// several goroutines through separate Generators.
type Generator struct {
	cfg Config
	// delay is the event-time distance between consecutive events.
	delay time.Duration
	// next is the position of the next event Next emits.
	next uint64
	// perm is the emission order of out-of-order group permGroup.
	perm      []int
	permGroup uint64
}

// NewGenerator returns a generator of the stream cfg describes, at its
// first event.
func NewGenerator(cfg Config) *Generator {
	cfg = cfg.withDefaults()
	return &Generator{cfg: cfg, delay: time.Second / time.Duration(cfg.EventsPerSecond)}
}

// Config returns the generator's configuration with defaults filled in.
func (g *Generator) Config() Config { return g.cfg }

// Next returns the next event of the stream.
func (g *Generator) Next() Event {
	e := g.Event(g.emitOrder(g.next))
	g.next++
	return e
}

// NextN returns the next n events of the stream.
func (g *Generator) NextN(n int) []Event {
	out := make([]Event, n)
	for i := range out {
		out[i] = g.Next()
	}
	return out
}

// shuffleSeed separates the random streams of out-of-order permutations
// from the events'.
const shuffleSeed = 0x73687566666c65

// emitOrder returns the number of the event emitted at position pos: with
// out-of-order groups, the group's events in an order drawn from (Seed,
// group number).
func (g *Generator) emitOrder(pos uint64) uint64 {
	size := uint64(g.cfg.OutOfOrderGroupSize)
	if size <= 1 {
		return pos
	}
	group := pos / size
	if g.perm == nil || g.permGroup != group {
		g.perm = rand.New(rand.NewPCG(g.cfg.Seed^shuffleSeed, group)).Perm(int(size))
		g.permGroup = group
	}
	return group*size + uint64(g.perm[pos%size])
}

// Time returns the date_time of event n.
func (g *Generator) Time(n uint64) time.Time {
	return g.cfg.BaseTime.Add(time.Duration(n) * g.delay)
}

// Event returns event number n.
func (g *Generator) Event(n uint64) Event {
	rng := rand.New(rand.NewPCG(g.cfg.Seed, n))
	e := Event{Number: n}
	switch rem := n % totalProportion; {
	case rem < personProportion:
		e.Kind = KindPerson
		e.Person = g.person(n, rng)
	case rem < personProportion+auctionProportion:
		e.Kind = KindAuction
		e.Auction = g.auction(n, rng)
	default:
		e.Kind = KindBid
		e.Bid = g.bid(n, rng)
	}
	return e
}

// lastPerson returns the 0-based index of the last person created at or
// before event n.
func lastPerson(n uint64) int64 {
	epoch, offset := n/totalProportion, n%totalProportion
	if offset >= personProportion {
		offset = personProportion - 1
	}
	return int64(epoch*personProportion + offset)
}

// lastAuction returns the 0-based index of the last auction created at or
// before event n (−1 before the first).
func lastAuction(n uint64) int64 {
	epoch, offset := int64(n/totalProportion), int64(n%totalProportion)
	switch {
	case offset < personProportion:
		epoch--
		offset = auctionProportion - 1
	case offset >= personProportion+auctionProportion:
		offset = auctionProportion - 1
	default:
		offset -= personProportion
	}
	return epoch*auctionProportion + offset
}

// somePerson returns the 0-based index of an active person as of event n:
// one of the last NumActivePeople, or up to personIDLead ahead of them.
func (g *Generator) somePerson(n uint64, rng *rand.Rand) int64 {
	people := lastPerson(n) + 1
	active := min(people, int64(g.cfg.NumActivePeople))
	return people - active + rng.Int64N(active+personIDLead)
}

// someAuction returns the 0-based index of an auction in flight as of
// event n: one of the last NumInFlightAuctions, or up to auctionIDLead
// ahead of them.
func (g *Generator) someAuction(n uint64, rng *rand.Rand) int64 {
	last := max(lastAuction(n), 0)
	lo := max(last-int64(g.cfg.NumInFlightAuctions), 0)
	return lo + rng.Int64N(last-lo+1+auctionIDLead)
}

// hot returns the hot id (a multiple of hotIDRatio) at or below index i.
func hot(i int64) int64 { return i / hotIDRatio * hotIDRatio }

func (g *Generator) person(n uint64, rng *rand.Rand) Person {
	p := Person{
		ID:           firstPersonID + lastPerson(n),
		Name:         firstNames[rng.IntN(len(firstNames))] + " " + lastNames[rng.IntN(len(lastNames))],
		EmailAddress: randomString(rng, 7) + "@" + randomString(rng, 5) + ".com",
		CreditCard:   fmt.Sprintf("%04d %04d %04d %04d", rng.IntN(10000), rng.IntN(10000), rng.IntN(10000), rng.IntN(10000)),
		City:         cities[rng.IntN(len(cities))],
		State:        states[rng.IntN(len(states))],
		DateTime:     g.Time(n),
	}
	size := 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State) + 8
	p.Extra = extra(rng, size, g.cfg.AvgPersonBytes)
	return p
}

func (g *Generator) auction(n uint64, rng *rand.Rand) Auction {
	seller := g.somePerson(n, rng)
	if rng.IntN(g.cfg.HotSellersRatio) > 0 {
		seller = hot(lastPerson(n))
	}
	initial := price(rng)
	a := Auction{
		ID:          firstAuctionID + lastAuction(n),
		ItemName:    randomString(rng, 20),
		Description: randomString(rng, 100),
		InitialBid:  initial,
		Reserve:     initial + price(rng),
		DateTime:    g.Time(n),
		Seller:      firstPersonID + seller,
		Category:    firstCategory + int64(rng.IntN(numCategories)),
	}
	a.Expires = a.DateTime.Add(g.auctionLength(rng))
	size := 8 + len(a.ItemName) + len(a.Description) + 8 + 8 + 8 + 8 + 8 + 8
	a.Extra = extra(rng, size, g.cfg.AvgAuctionBytes)
	return a
}

// auctionLength draws how long an auction stays open: up to twice the
// event time in which NumInFlightAuctions auctions are created, so that
// about that many are open at any time.
func (g *Generator) auctionLength(rng *rand.Rand) time.Duration {
	events := int64(g.cfg.NumInFlightAuctions) * totalProportion / auctionProportion
	horizon := time.Duration(events) * g.delay
	return time.Microsecond * time.Duration(1+rng.Int64N(max(int64(2*horizon/time.Microsecond), 1)))
}

func (g *Generator) bid(n uint64, rng *rand.Rand) Bid {
	auction := g.someAuction(n, rng)
	if rng.IntN(g.cfg.HotAuctionRatio) > 0 {
		auction = hot(max(lastAuction(n), 0))
	}
	bidder := g.somePerson(n, rng)
	if rng.IntN(g.cfg.HotBiddersRatio) > 0 {
		bidder = hot(lastPerson(n)) + 1
	}
	b := Bid{
		Auction:  firstAuctionID + auction,
		Bidder:   firstPersonID + bidder,
		Price:    price(rng),
		DateTime: g.Time(n),
	}
	if rng.IntN(g.cfg.HotChannelsRatio) > 0 {
		i := rng.IntN(len(hotChannels))
		b.Channel, b.URL = hotChannels[i], hotChannelURL(i)
	} else {
		b.Channel, b.URL = channel(rng.IntN(numChannels))
	}
	// As in the benchmark, the fixed-size fields count and the channel
	// and URL do not.
	b.Extra = extra(rng, 8+8+8+8, g.cfg.AvgBidBytes)
	return b
}

// price draws a price in cents: 100 × 10^u for u uniform in [0, 6).
func price(rng *rand.Rand) int64 {
	return int64(math.Round(math.Pow(10, rng.Float64()*6) * 100))
}

// minStringLength is the shortest random string.
const minStringLength = 3

// randomString returns lowercase letters and inner spaces, between
// minStringLength and maxLength−1 characters before trimming.
func randomString(rng *rand.Rand, maxLength int) string {
	return strings.TrimSpace(exactString(rng, minStringLength+rng.IntN(maxLength-minStringLength)))
}

// exactString returns n lowercase letters and spaces (1 in 13).
//
// Each character is one of 13 × 26 equally likely outcomes (the first 26
// a space, the rest a letter), drawn from a 64-bit random word by
// multiplying it by 338 and keeping the high word, the low word being the
// rest of the entropy for the next character; a word serves seven
// characters. The padding of events is most of the bytes generated, and
// drawing twice per byte from the generator was a fifth of the CPU of the
// benchmarks that replay the stream.
func exactString(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.Grow(n)
	var word uint64
	for i := range n {
		if i%7 == 0 {
			word = rng.Uint64()
		}
		var v uint64
		v, word = bits.Mul64(word, uint64(len(paddingOutcomes)))
		b.WriteByte(paddingOutcomes[v])
	}
	return b.String()
}

// paddingOutcomes are exactString's 338 outcomes: 26 spaces, then the
// alphabet 12 times.
var paddingOutcomes = func() (t [13 * 26]byte) {
	for i := range t {
		t[i] = ' '
		if i >= 26 {
			t[i] = byte('a' + i%26)
		}
	}
	return t
}()

// extra returns the padding that brings an event of size bytes to about
// avg bytes: within ±20% of the missing size, empty when nothing is
// missing.
func extra(rng *rand.Rand, size, avg int) string {
	if size >= avg {
		return ""
	}
	missing := avg - size
	delta := int(math.Round(float64(missing) * 0.2))
	n := missing - delta
	if delta > 0 {
		n += rng.IntN(2 * delta)
	}
	return exactString(rng, n)
}

// baseURL returns an item URL under three random directories.
func baseURL(rng *rand.Rand) string {
	return "https://www.nexmark.com/" + exactString(rng, 5) + "/" + exactString(rng, 5) + "/" + exactString(rng, 5) + "/item.htm?query=1"
}

// urlSeed separates the random streams of channel URLs from the events'.
const urlSeed = 0x6e65786d61726b

// hotChannelURL returns the URL of hot channel i: always the same.
func hotChannelURL(i int) string {
	return baseURL(rand.New(rand.NewPCG(urlSeed, uint64(i))))
}

// channel returns the name and URL of ordinary channel i: always the same.
// Nine in ten URLs carry the channel's id (the bits of i reversed) as the
// channel_id query parameter.
func channel(i int) (name, url string) {
	rng := rand.New(rand.NewPCG(urlSeed, uint64(len(hotChannels)+i)))
	url = baseURL(rng)
	if rng.IntN(10) > 0 {
		url += fmt.Sprintf("&channel_id=%d", reverseBits32(uint32(i)))
	}
	return fmt.Sprintf("channel-%d", i), url
}

// reverseBits32 reverses the bits of a 32-bit value and takes the result's
// absolute value as a signed integer.
func reverseBits32(v uint32) int64 {
	var r uint32
	for range 32 {
		r = r<<1 | v&1
		v >>= 1
	}
	return int64(math.Abs(float64(int32(r))))
}

var (
	hotChannels = []string{"Google", "Facebook", "Baidu", "Apple"}
	firstNames  = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames   = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	states      = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	cities      = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
)
