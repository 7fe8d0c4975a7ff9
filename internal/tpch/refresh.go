package tpch

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Transaction is one refresh step: statements meant to run in one
// transaction, so that every view sees all of them or none.
type Transaction struct {
	// Name says what the step changes, for reports.
	Name       string
	Statements []string
	// Rows counts the rows the step inserts or deletes (RF1, RF2): a
	// throughput measure for benchmarks. Updates leave it 0.
	Rows int
}

// Combine returns one transaction running ts in order.
func Combine(name string, ts ...Transaction) Transaction {
	out := Transaction{Name: name}
	for _, t := range ts {
		out.Statements = append(out.Statements, t.Statements...)
		out.Rows += t.Rows
	}
	return out
}

// RefreshSize is the number of orders the specification's refresh
// functions insert and delete: SF × 1,500 (0.1% of ORDERS), at least one.
func (g *Generator) RefreshSize() int {
	return max(1, int(math.Round(g.cfg.ScaleFactor*1_500)))
}

// RF1 inserts n new orders with their lineitems (the specification's
// new-sales refresh function), at keys the initial population left
// unused.
func (g *Generator) RF1(n int) Transaction {
	var orders []Order
	var lines []LineItem
	for range n {
		o, ls := g.order(g.rng, insertedKey(g.inserted))
		g.inserted++
		orders = append(orders, o)
		lines = append(lines, ls...)
		g.live.add(o.OrderKey, len(ls))
	}
	stmts := append(InsertStatements("orders", orders), InsertStatements("lineitem", lines)...)
	return Transaction{
		Name:       fmt.Sprintf("RF1: insert %d orders, %d lineitems", len(orders), len(lines)),
		Statements: stmts,
		Rows:       len(orders) + len(lines),
	}
}

// RF2 deletes n existing orders with their lineitems (the specification's
// old-sales refresh function), chosen at random among the initial and
// the inserted ones.
func (g *Generator) RF2(n int) Transaction {
	keys, lines := g.live.pick(g.rng, n)
	rows := len(keys)
	for i, k := range keys {
		g.live.remove(k)
		rows += lines[i]
	}
	in := intList(keys)
	return Transaction{
		Name: fmt.Sprintf("RF2: delete %d orders, %d lineitems", len(keys), rows-len(keys)),
		Rows: rows,
		Statements: []string{
			"DELETE FROM lineitem WHERE l_orderkey IN (" + in + ")",
			"DELETE FROM orders WHERE o_orderkey IN (" + in + ")",
		},
	}
}

// The update steps below are not in the specification, whose refresh
// functions only insert and delete. Each changes columns the queries
// filter, join, group or aggregate on, so that rows move between groups,
// join partners and the rows a LIMIT keeps.

// ShiftShipDates moves the ship and receipt dates of all lineitems of n
// orders by up to 60 days either way, with their line status.
func (g *Generator) ShiftShipDates(n int) Transaction {
	keys, _ := g.live.pick(g.rng, n)
	days := g.rng.IntN(121) - 60
	if days == 0 {
		days = 1
	}
	return Transaction{
		Name: fmt.Sprintf("move the ship dates of %d orders by %d days", len(keys), days),
		Statements: []string{fmt.Sprintf(
			"UPDATE lineitem SET l_shipdate = l_shipdate + %[1]d, l_receiptdate = l_receiptdate + %[1]d, "+
				"l_linestatus = CASE WHEN l_shipdate + %[1]d > DATE '%[2]s' THEN 'O' ELSE 'F' END "+
				"WHERE l_orderkey IN (%[3]s)", days, currentDate, intList(keys))},
	}
}

// ChangeDiscounts sets the discount of one lineitem in each of n orders.
func (g *Generator) ChangeDiscounts(n int) Transaction {
	keys, lines := g.live.pick(g.rng, n)
	t := Transaction{Name: fmt.Sprintf("change the discounts of %d lineitems", len(keys))}
	for i, k := range keys {
		t.Statements = append(t.Statements, fmt.Sprintf(
			"UPDATE lineitem SET l_discount = %s WHERE l_orderkey = %d AND l_linenumber = %d",
			Decimal(g.rng.IntN(11)), k, 1+g.rng.IntN(lines[i])))
	}
	return t
}

// ChangeQuantities sets the quantity of one lineitem in each of n orders
// (with its extended price), which moves orders across Q18's threshold.
func (g *Generator) ChangeQuantities(n int) Transaction {
	keys, lines := g.live.pick(g.rng, n)
	t := Transaction{Name: fmt.Sprintf("change the quantities of %d lineitems", len(keys))}
	for i, k := range keys {
		qty := 1 + g.rng.IntN(50)
		t.Statements = append(t.Statements, fmt.Sprintf(
			"UPDATE lineitem SET l_quantity = %d, l_extendedprice = %d * (l_extendedprice / l_quantity) "+
				"WHERE l_orderkey = %d AND l_linenumber = %d", qty, qty, k, 1+g.rng.IntN(lines[i])))
	}
	return t
}

// ChangeOrderStatus sets the status of n orders to F, O or P.
func (g *Generator) ChangeOrderStatus(n int) Transaction {
	keys, _ := g.live.pick(g.rng, n)
	status := pick(g.rng, []string{"F", "O", "P"})
	return Transaction{
		Name: fmt.Sprintf("set the status of %d orders to %s", len(keys), status),
		Statements: []string{fmt.Sprintf(
			"UPDATE orders SET o_orderstatus = '%s' WHERE o_orderkey IN (%s)", status, intList(keys))},
	}
}

// ChangeBalances sets the account balances of n customers and one
// supplier to random values in the specification's range.
func (g *Generator) ChangeBalances(n int) Transaction {
	t := Transaction{Name: fmt.Sprintf("change the balances of %d customers and a supplier", n)}
	for range n {
		t.Statements = append(t.Statements, fmt.Sprintf("UPDATE customer SET c_acctbal = %s WHERE c_custkey = %d",
			Decimal(-99_999+g.rng.IntN(1_099_999)), 1+g.rng.IntN(g.customers)))
	}
	t.Statements = append(t.Statements, fmt.Sprintf("UPDATE supplier SET s_acctbal = %s WHERE s_suppkey = %d",
		Decimal(-99_999+g.rng.IntN(1_099_999)), 1+g.rng.IntN(g.suppliers)))
	return t
}

// ChangeSupplyCosts sets the supply cost of n PARTSUPP rows, which
// changes Q2's cheapest supplier of a part.
func (g *Generator) ChangeSupplyCosts(n int) Transaction {
	t := Transaction{Name: fmt.Sprintf("change the supply costs of %d part suppliers", n)}
	for range n {
		p := 1 + g.rng.IntN(g.parts)
		t.Statements = append(t.Statements, fmt.Sprintf(
			"UPDATE partsupp SET ps_supplycost = %s WHERE ps_partkey = %d AND ps_suppkey = %d",
			Decimal(100+g.rng.IntN(99_901)), p, partSupplier(p, g.rng.IntN(4), g.suppliers)))
	}
	return t
}

// ChangePartSizes sets the size of n parts.
func (g *Generator) ChangePartSizes(n int) Transaction {
	var keys []int
	for range n {
		keys = append(keys, 1+g.rng.IntN(g.parts))
	}
	size := 1 + g.rng.IntN(50)
	return Transaction{
		Name: fmt.Sprintf("set the size of %d parts to %d", n, size),
		Statements: []string{fmt.Sprintf(
			"UPDATE part SET p_size = %d WHERE p_partkey IN (%s)", size, intList(keys))},
	}
}

// MoveCustomers moves n customers to another nation, with their phone
// numbers' country codes.
func (g *Generator) MoveCustomers(n int) Transaction {
	t := Transaction{Name: fmt.Sprintf("move %d customers to another nation", n)}
	for range n {
		nation := g.rng.IntN(len(nations))
		t.Statements = append(t.Statements, fmt.Sprintf(
			"UPDATE customer SET c_nationkey = %d, c_phone = '%d' || substring(c_phone from 3) WHERE c_custkey = %d",
			nation, nation+10, 1+g.rng.IntN(g.customers)))
	}
	return t
}

// MoveSupplier moves a supplier to another nation and marks it as the
// subject of complaints (Q16) or takes the remark away.
func (g *Generator) MoveSupplier() Transaction {
	s := 1 + g.rng.IntN(g.suppliers)
	nation := g.rng.IntN(len(nations))
	comment := "Customer " + g.text.comment(g.rng, 0, 10) + "Complaints"
	if g.rng.IntN(2) == 0 {
		comment = g.text.comment(g.rng, 25, 100)
	}
	var b strings.Builder
	quote(&b, comment)
	return Transaction{
		Name: fmt.Sprintf("move supplier %d to nation %d, comment %q", s, nation, comment),
		Statements: []string{fmt.Sprintf(
			"UPDATE supplier SET s_nationkey = %d, s_phone = '%d' || substring(s_phone from 3), s_comment = %s WHERE s_suppkey = %d",
			nation, nation+10, b.String(), s)},
	}
}

func intList(keys []int) string {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = strconv.Itoa(k)
	}
	return strings.Join(s, ", ")
}
