package tpch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Config chooses the generated data.
type Config struct {
	// ScaleFactor scales every table but NATION and REGION: SF 1 is the
	// specification's 6 million lineitems; SF 0.001 about 6,000.
	ScaleFactor float64
	// Seed makes the data and every refresh step after it reproducible.
	Seed uint64
}

// The dates of clause 4.2.2.12.
var (
	startDate   = MakeDate(1992, 1, 1)
	endDate     = MakeDate(1998, 12, 31)
	currentDate = MakeDate(1995, 6, 17)
)

// Data is the initial population of the eight tables.
type Data struct {
	Region   []Region
	Nation   []Nation
	Part     []Part
	Supplier []Supplier
	PartSupp []PartSupp
	Customer []Customer
	Orders   []Order
	LineItem []LineItem
}

// Statements returns the INSERT statements that load d, table by table in
// the order of Schema.
func (d *Data) Statements() []string {
	var out []string
	out = append(out, InsertStatements("region", d.Region)...)
	out = append(out, InsertStatements("nation", d.Nation)...)
	out = append(out, InsertStatements("part", d.Part)...)
	out = append(out, InsertStatements("supplier", d.Supplier)...)
	out = append(out, InsertStatements("partsupp", d.PartSupp)...)
	out = append(out, InsertStatements("customer", d.Customer)...)
	out = append(out, InsertStatements("orders", d.Orders)...)
	out = append(out, InsertStatements("lineitem", d.LineItem)...)
	return out
}

// Rows returns the number of rows of d.
func (d *Data) Rows() int {
	return len(d.Region) + len(d.Nation) + len(d.Part) + len(d.Supplier) + len(d.PartSupp) +
		len(d.Customer) + len(d.Orders) + len(d.LineItem)
}

// Generator generates the initial data of a configuration and then the
// refresh steps that change it. It remembers which orders exist, so that
// deletes and updates name existing rows and inserts new keys.
type Generator struct {
	cfg Config
	// Cardinalities at the scale factor.
	parts, suppliers, customers, orders, clerks int

	text *textPool
	// rng draws the refresh steps; the initial data has a stream of its
	// own, so that it does not depend on the refresh steps asked for.
	rng *rand.Rand
	// live holds the orders that exist with their line counts.
	live orderSet
	// inserted counts the orders RF1 has added.
	inserted int
}

// New returns a generator for cfg and the initial data. The scale factor
// must give at least four suppliers (0.0004), since every part has four.
func New(cfg Config) (*Generator, *Data, error) {
	scaled := func(n float64) int { return int(math.Round(cfg.ScaleFactor * n)) }
	g := &Generator{
		cfg:       cfg,
		parts:     scaled(200_000),
		suppliers: scaled(10_000),
		customers: scaled(150_000),
		orders:    scaled(1_500_000),
		clerks:    max(1, scaled(1_000)),
		live:      orderSet{index: map[int]int{}},
	}
	if g.suppliers < 4 {
		return nil, nil, fmt.Errorf("tpch: scale factor %g gives %d suppliers; at least 4 are needed", cfg.ScaleFactor, g.suppliers)
	}
	g.text = newTextPool(rand.New(rand.NewPCG(cfg.Seed, 0x7e47)))
	g.rng = rand.New(rand.NewPCG(cfg.Seed, 0x4ef4e54))
	d := g.generate(rand.New(rand.NewPCG(cfg.Seed, 0xda7a)))
	return g, d, nil
}

// ScaleFactor returns the configured scale factor.
func (g *Generator) ScaleFactor() float64 { return g.cfg.ScaleFactor }

func (g *Generator) generate(rng *rand.Rand) *Data {
	d := &Data{}
	for k, name := range regions {
		d.Region = append(d.Region, Region{k, name, g.text.comment(rng, 31, 115)})
	}
	for k, n := range nations {
		d.Nation = append(d.Nation, Nation{k, n.name, n.region, g.text.comment(rng, 31, 114)})
	}
	for p := 1; p <= g.parts; p++ {
		part, supps := g.part(rng, p)
		d.Part = append(d.Part, part)
		d.PartSupp = append(d.PartSupp, supps...)
	}
	d.Supplier = g.suppliersOf(rng)
	for c := 1; c <= g.customers; c++ {
		d.Customer = append(d.Customer, Customer{
			CustKey:    c,
			Name:       fmt.Sprintf("Customer#%09d", c),
			Address:    vstring(rng, 10, 40),
			NationKey:  rng.IntN(len(nations)),
			MktSegment: pick(rng, segments),
			Comment:    g.text.comment(rng, 29, 116),
		})
		cu := &d.Customer[len(d.Customer)-1]
		cu.Phone = phone(rng, cu.NationKey)
		cu.AcctBal = Decimal(-99_999 + rng.IntN(1_099_999))
	}
	for i := range g.orders {
		o, lines := g.order(rng, sparseKey(i))
		d.Orders = append(d.Orders, o)
		d.LineItem = append(d.LineItem, lines...)
		g.live.add(o.OrderKey, len(lines))
	}
	return d
}

// part returns part p and its four PARTSUPP rows.
func (g *Generator) part(rng *rand.Rand, p int) (Part, []PartSupp) {
	// Five distinct colors.
	var name []string
	for len(name) < 5 {
		c := pick(rng, colors)
		if !contains(name, c) {
			name = append(name, c)
		}
	}
	m := 1 + rng.IntN(5)
	part := Part{
		PartKey:     p,
		Name:        strings.Join(name, " "),
		Mfgr:        fmt.Sprintf("Manufacturer#%d", m),
		Brand:       fmt.Sprintf("Brand#%d%d", m, 1+rng.IntN(5)),
		Type:        pick(rng, typeSize) + " " + pick(rng, typeFinish) + " " + pick(rng, typeMetal),
		Size:        1 + rng.IntN(50),
		Container:   pick(rng, containerSz) + " " + pick(rng, containerTy),
		RetailPrice: retailPrice(p),
		Comment:     g.text.comment(rng, 5, 22),
	}
	var supps []PartSupp
	for i := range 4 {
		supps = append(supps, PartSupp{
			PartKey:    p,
			SuppKey:    partSupplier(p, i, g.suppliers),
			AvailQty:   1 + rng.IntN(9999),
			SupplyCost: Decimal(100 + rng.IntN(99_901)),
			Comment:    g.text.comment(rng, 49, 198),
		})
	}
	return part, supps
}

// retailPrice is P_RETAILPRICE, a function of the key (clause 4.2.3).
func retailPrice(p int) Decimal {
	return Decimal(90_000 + (p/10)%20_001 + 100*(p%1_000))
}

// partSupplier returns the key of part p's i-th supplier (i in 0..3) among
// s suppliers: the specification's (p + i·(s/4 + (p−1)/s)) mod s + 1.
// Below about a hundred suppliers that formula can give a part the same
// supplier twice; the stride s/4 then keeps the four distinct.
func partSupplier(p, i, s int) int {
	stride := s/4 + (p-1)/s
	for d := 1; d < 4; d++ {
		if d*stride%s == 0 {
			stride = s / 4
			break
		}
	}
	return (p+i*stride)%s + 1
}

// suppliersOf returns SUPPLIER. SF·5 of them (at least one) have
// "Customer ... Complaints" in their comment and as many others
// "Customer ... Recommends" (Q16 excludes the former).
func (g *Generator) suppliersOf(rng *rand.Rand) []Supplier {
	var out []Supplier
	for s := 1; s <= g.suppliers; s++ {
		nation := rng.IntN(len(nations))
		out = append(out, Supplier{
			SuppKey:   s,
			Name:      fmt.Sprintf("Supplier#%09d", s),
			Address:   vstring(rng, 10, 40),
			NationKey: nation,
			Phone:     phone(rng, nation),
			AcctBal:   Decimal(-99_999 + rng.IntN(1_099_999)),
			Comment:   g.text.comment(rng, 25, 100),
		})
	}
	n := min(max(1, int(math.Round(g.cfg.ScaleFactor*5))), g.suppliers/2)
	perm := rng.Perm(g.suppliers)
	for i, s := range perm[:2*n] {
		word := "Complaints"
		if i >= n {
			word = "Recommends"
		}
		out[s].Comment = g.customerRemark(rng, out[s].Comment, word)
	}
	return out
}

// customerRemark puts "Customer <some text> word" at a random position of
// comment, keeping it within S_COMMENT's 101 characters.
func (g *Generator) customerRemark(rng *rand.Rand, comment, word string) string {
	remark := "Customer " + g.text.comment(rng, 0, 10) + word
	pos := rng.IntN(len(comment) + 1)
	s := comment[:pos] + remark + comment[pos:]
	if len(s) > 100 {
		// Cut the comment's tail, never the remark.
		cut := len(s) - 100
		s = comment[:max(0, pos-cut)] + remark + comment[pos:]
		if len(s) > 100 {
			s = s[:100]
		}
	}
	return s
}

// phone returns a phone number of a nation: its country code (key + 10)
// and three random groups (clause 4.2.2.9).
func phone(rng *rand.Rand, nation int) string {
	return fmt.Sprintf("%02d-%03d-%03d-%04d", nation+10, 100+rng.IntN(900), 100+rng.IntN(900), 1000+rng.IntN(9000))
}

// sparseKey returns the key of the i-th order (from 0) of the initial
// population: only the first 8 keys of every 32 are used (clause 4.2.3),
// leaving the others to RF1.
func sparseKey(i int) int { return i/8*32 + i%8 + 1 }

// insertedKey returns the key of the i-th order (from 0) RF1 inserts: the
// unused keys of the initial population's groups, in order.
func insertedKey(i int) int { return i/24*32 + 8 + i%24 + 1 }

// order returns an order with key and its lineitems.
func (g *Generator) order(rng *rand.Rand, key int) (Order, []LineItem) {
	cust := 1 + rng.IntN(g.customers)
	for cust%3 == 0 {
		// A third of the customers never order (Q13 and Q22 count them).
		cust = 1 + rng.IntN(g.customers)
	}
	date := startDate + Date(rng.IntN(int(endDate-151-startDate)+1))
	o := Order{
		OrderKey:      key,
		CustKey:       cust,
		OrderDate:     date,
		OrderPriority: pick(rng, priorities),
		Clerk:         fmt.Sprintf("Clerk#%09d", 1+rng.IntN(g.clerks)),
		ShipPriority:  0,
		Comment:       g.text.comment(rng, 19, 78),
	}
	var lines []LineItem
	var total int64 // in 10⁻⁶
	shipped, open := 0, 0
	count := 1 + rng.IntN(7)
	for n := 1; n <= count; n++ {
		part := 1 + rng.IntN(g.parts)
		qty := 1 + rng.IntN(50)
		l := LineItem{
			OrderKey:      key,
			PartKey:       part,
			SuppKey:       partSupplier(part, rng.IntN(4), g.suppliers),
			LineNumber:    n,
			Quantity:      Decimal(100 * qty),
			ExtendedPrice: Decimal(qty) * retailPrice(part),
			Discount:      Decimal(rng.IntN(11)),
			Tax:           Decimal(rng.IntN(9)),
			ShipDate:      date + Date(1+rng.IntN(121)),
			CommitDate:    date + Date(30+rng.IntN(61)),
			ShipInstruct:  pick(rng, instructions),
			ShipMode:      pick(rng, shipModes),
			Comment:       g.text.comment(rng, 10, 43),
		}
		l.ReceiptDate = l.ShipDate + Date(1+rng.IntN(30))
		l.ReturnFlag = "N"
		if l.ReceiptDate <= currentDate {
			l.ReturnFlag = pick(rng, []string{"R", "A"})
		}
		if l.ShipDate > currentDate {
			l.LineStatus = "O"
			open++
		} else {
			l.LineStatus = "F"
			shipped++
		}
		total += int64(l.ExtendedPrice) * (100 + int64(l.Tax)) * (100 - int64(l.Discount))
		lines = append(lines, l)
	}
	o.TotalPrice = Decimal((total + 5_000) / 10_000)
	switch {
	case open == 0:
		o.OrderStatus = "F"
	case shipped == 0:
		o.OrderStatus = "O"
	default:
		o.OrderStatus = "P"
	}
	return o, lines
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// orderSet is the set of existing orders with their line counts, in an
// order that depends only on the operations applied (never on map
// iteration), so that random picks are reproducible.
type orderSet struct {
	keys  []int
	lines []int
	index map[int]int // key → position in keys
}

func (s *orderSet) add(key, lines int) {
	s.index[key] = len(s.keys)
	s.keys = append(s.keys, key)
	s.lines = append(s.lines, lines)
}

func (s *orderSet) remove(key int) {
	i, ok := s.index[key]
	if !ok {
		return
	}
	last := len(s.keys) - 1
	s.keys[i], s.lines[i] = s.keys[last], s.lines[last]
	s.index[s.keys[i]] = i
	s.keys, s.lines = s.keys[:last], s.lines[:last]
	delete(s.index, key)
}

// pick returns n distinct random orders (fewer if fewer exist) and their
// line counts.
func (s *orderSet) pick(rng *rand.Rand, n int) (keys, lines []int) {
	n = min(n, len(s.keys))
	seen := map[int]bool{}
	for len(keys) < n {
		i := rng.IntN(len(s.keys))
		if seen[i] {
			continue
		}
		seen[i] = true
		keys = append(keys, s.keys[i])
		lines = append(lines, s.lines[i])
	}
	return keys, lines
}
