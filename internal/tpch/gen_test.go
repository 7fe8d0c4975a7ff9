package tpch

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestGeneratorFollowsSpecification checks the rules of clause 4.2.3 that
// the queries depend on, over the data of two scale factors.
func TestGeneratorFollowsSpecification(t *testing.T) {
	for _, sf := range []float64{0.001, 0.002} {
		t.Run(fmt.Sprint(sf), func(t *testing.T) {
			_, d, err := New(Config{ScaleFactor: sf, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			checkData(t, sf, d)
		})
	}
}

func checkData(t *testing.T, sf float64, d *Data) {
	count := func(name string, got int, want float64) {
		if got != int(want*sf+0.5) {
			t.Errorf("%d %s rows, want %g", got, name, want*sf)
		}
	}
	count("part", len(d.Part), 200_000)
	count("supplier", len(d.Supplier), 10_000)
	count("partsupp", len(d.PartSupp), 800_000)
	count("customer", len(d.Customer), 150_000)
	count("orders", len(d.Orders), 1_500_000)
	if len(d.Region) != 5 || len(d.Nation) != 25 {
		t.Errorf("%d regions, %d nations", len(d.Region), len(d.Nation))
	}

	// Every part has four distinct suppliers.
	supps := map[int][]int{}
	for _, ps := range d.PartSupp {
		supps[ps.PartKey] = append(supps[ps.PartKey], ps.SuppKey)
	}
	for p, ss := range supps {
		slices.Sort(ss)
		if len(slices.Compact(ss)) != 4 {
			t.Fatalf("part %d has suppliers %v", p, ss)
		}
	}
	for _, p := range d.Part {
		if p.RetailPrice != Decimal(90_000+(p.PartKey/10)%20_001+100*(p.PartKey%1_000)) ||
			len(strings.Fields(p.Name)) != 5 || p.Size < 1 || p.Size > 50 {
			t.Fatalf("part %+v", p)
		}
	}
	complaints := 0
	for _, s := range d.Supplier {
		if s.Phone[:2] != fmt.Sprint(s.NationKey+10) || len(s.Comment) > 101 {
			t.Fatalf("supplier %+v", s)
		}
		if strings.Contains(s.Comment, "Customer") && strings.Contains(s.Comment, "Complaints") {
			complaints++
		}
	}
	if complaints == 0 {
		t.Error("no supplier has a complaint")
	}
	for _, c := range d.Customer {
		if c.Phone[:2] != fmt.Sprint(c.NationKey+10) || c.AcctBal < -99_999 || c.AcctBal > 999_999 {
			t.Fatalf("customer %+v", c)
		}
	}

	lines := map[int][]LineItem{}
	for _, l := range d.LineItem {
		lines[l.OrderKey] = append(lines[l.OrderKey], l)
		wantFlag := "N"
		if l.ReceiptDate <= currentDate {
			wantFlag = "R or A"
		}
		wantStatus := "F"
		if l.ShipDate > currentDate {
			wantStatus = "O"
		}
		if !strings.Contains(wantFlag, l.ReturnFlag) || l.LineStatus != wantStatus ||
			l.Discount < 0 || l.Discount > 10 || l.Tax < 0 || l.Tax > 8 ||
			l.ExtendedPrice != l.Quantity/100*retailPrice(l.PartKey) ||
			!slices.Contains(supps[l.PartKey], l.SuppKey) {
			t.Fatalf("lineitem %+v", l)
		}
	}
	for _, o := range d.Orders {
		ls := lines[o.OrderKey]
		if len(ls) < 1 || len(ls) > 7 || o.CustKey%3 == 0 || (o.OrderKey-1)%32 >= 8 {
			t.Fatalf("order %+v with %d lines", o, len(ls))
		}
		var total int64
		statuses := ""
		for i, l := range ls {
			if l.LineNumber != i+1 || l.ShipDate <= o.OrderDate || l.ShipDate > o.OrderDate+121 ||
				l.CommitDate < o.OrderDate+30 || l.CommitDate > o.OrderDate+90 ||
				l.ReceiptDate <= l.ShipDate || l.ReceiptDate > l.ShipDate+30 {
				t.Fatalf("lineitem %+v of order %+v", l, o)
			}
			total += int64(l.ExtendedPrice) * (100 + int64(l.Tax)) * (100 - int64(l.Discount))
			statuses += l.LineStatus
		}
		want := "P"
		if !strings.Contains(statuses, "O") {
			want = "F"
		} else if !strings.Contains(statuses, "F") {
			want = "O"
		}
		if o.OrderStatus != want || o.TotalPrice != Decimal((total+5_000)/10_000) ||
			o.OrderDate < startDate || o.OrderDate > endDate-151 {
			t.Fatalf("order %+v, lines %s", o, statuses)
		}
	}
}

// TestGeneratorIsDeterministic checks that a configuration always gives
// the same data and refresh steps, and that refresh steps name existing
// orders and new keys.
func TestGeneratorIsDeterministic(t *testing.T) {
	run := func() []string {
		g, d, err := New(Config{ScaleFactor: 0.001, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		out := d.Statements()
		for range 3 {
			for _, tx := range append([]Transaction{g.RF1(5), g.RF2(5), g.ShiftShipDates(2), g.ChangeQuantities(2),
				g.MoveCustomers(1), g.MoveSupplier()}, g.AimedChanges()...) {
				out = append(out, tx.Statements...)
			}
		}
		return out
	}
	a, b := run(), run()
	if !slices.Equal(a, b) {
		t.Fatal("two generators with the same configuration differ")
	}
	_, d2, _ := New(Config{ScaleFactor: 0.001, Seed: 4})
	if slices.Equal(a[:len(d2.Statements())], d2.Statements()) {
		t.Error("another seed gives the same data")
	}
}

// TestRefreshKeys checks that RF1 inserts keys never used before and RF2
// deletes existing orders, each once.
func TestRefreshKeys(t *testing.T) {
	g, d, err := New(Config{ScaleFactor: 0.001, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	exists := map[int]bool{}
	for _, o := range d.Orders {
		exists[o.OrderKey] = true
	}
	for range 20 {
		before := g.inserted
		tx := g.RF1(30)
		if tx.Rows <= 30 {
			t.Fatalf("RF1 of 30 orders inserts %d rows", tx.Rows)
		}
		for i := before; i < g.inserted; i++ {
			k := insertedKey(i)
			if exists[k] {
				t.Fatalf("RF1 reuses key %d", k)
			}
			exists[k] = true
		}
		keys, _ := g.live.pick(g.rng, 1_000_000)
		if len(keys) != len(exists) {
			t.Fatalf("%d live orders, %d exist", len(keys), len(exists))
		}
		for _, k := range keys {
			if !exists[k] {
				t.Fatalf("live order %d does not exist", k)
			}
		}
		del := g.RF2(25)
		in := strings.TrimSuffix(strings.TrimPrefix(del.Statements[1], "DELETE FROM orders WHERE o_orderkey IN ("), ")")
		for _, s := range strings.Split(in, ", ") {
			var k int
			fmt.Sscan(s, &k)
			if !exists[k] {
				t.Fatalf("RF2 deletes order %d, which does not exist", k)
			}
			delete(exists, k)
		}
	}
}
