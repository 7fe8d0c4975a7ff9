package tpch

import "fmt"

// AimedChanges returns transactions aimed at the rows the queries'
// parameters select (Queries): random refresh steps at a small scale
// factor rarely touch, say, the one nation Q11 reads or the orders near
// Q18's threshold, so these move rows into and out of those results on
// purpose. Each call draws new keys and directions. Their WHERE clauses
// use subqueries (IN over a join, over GROUP BY ... HAVING), which both
// systems must evaluate alike.
func (g *Generator) AimedChanges() []Transaction {
	k := g.rng.IntN(10)
	up := g.rng.IntN(2) == 0
	var out []Transaction
	add := func(name string, stmts ...string) {
		out = append(out, Transaction{Name: name, Statements: stmts})
	}

	// Q2: a BRASS part gets size 15 (and may enter), or a size-15 part
	// leaves.
	if up {
		add("Q2: BRASS parts get size 15", fmt.Sprintf(
			"UPDATE part SET p_size = 15 WHERE p_type LIKE '%%BRASS' AND p_partkey %% 10 = %d", k))
	} else {
		add("Q2: size-15 BRASS parts get size 16", fmt.Sprintf(
			"UPDATE part SET p_size = 16 WHERE p_size = 15 AND p_type LIKE '%%BRASS' AND p_partkey %% 2 = %d", k%2))
	}

	// Q11: German suppliers' stock value changes, and with it the
	// threshold.
	add("Q11: German supply costs change", fmt.Sprintf(
		"UPDATE partsupp SET ps_supplycost = ps_supplycost + %d WHERE ps_partkey %% 10 = %d AND ps_suppkey IN "+
			"(SELECT s_suppkey FROM supplier, nation WHERE s_nationkey = n_nationkey AND n_name = 'GERMANY')",
		100+g.rng.IntN(900), k))

	// Q17: small quantities of the chosen parts change their average and
	// which lineitems are below a fifth of it.
	add("Q17: quantities of Brand#34 LG JAR parts change", fmt.Sprintf(
		"UPDATE lineitem SET l_quantity = %d, l_extendedprice = %d * (l_extendedprice / l_quantity) "+
			"WHERE l_linenumber = %d AND l_partkey IN "+
			"(SELECT p_partkey FROM part WHERE p_brand = 'Brand#34' AND p_container = 'LG JAR')",
		1+g.rng.IntN(50), 1+g.rng.IntN(50), 1+k%4))

	// Q18: orders just below the threshold cross it, or those above drop
	// below.
	if up {
		add("Q18: orders cross the quantity threshold",
			"UPDATE lineitem SET l_quantity = l_quantity + 10 WHERE l_orderkey IN "+
				"(SELECT l_orderkey FROM lineitem GROUP BY l_orderkey HAVING sum(l_quantity) BETWEEN 200 AND 250)")
	} else {
		add("Q18: orders drop below the quantity threshold",
			"UPDATE lineitem SET l_quantity = l_quantity - 10 WHERE l_quantity > 10 AND l_orderkey IN "+
				"(SELECT l_orderkey FROM lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > 250)")
	}

	// Q19: lineitems of the third arm's parts are shipped by air, in
	// person, or not.
	mode, instruct := "'AIR'", "'DELIVER IN PERSON'"
	if !up {
		mode, instruct = "'TRUCK'", "'NONE'"
	}
	add("Q19: ship modes of Brand#52 LG parts change", fmt.Sprintf(
		"UPDATE lineitem SET l_shipmode = %s, l_shipinstruct = %s WHERE l_quantity BETWEEN 25 AND 35 AND l_partkey IN "+
			"(SELECT p_partkey FROM part WHERE p_brand = 'Brand#52' AND p_container LIKE 'LG%%' AND p_size <= 15)",
		mode, instruct))

	// Q20: a supplier of midnight parts moves to CANADA, and the stock of
	// such parts at Canadian suppliers runs out or is refilled.
	qty := 1
	if up {
		qty = 9_000
	}
	add("Q20: a supplier of midnight parts moves to CANADA, stock changes", fmt.Sprintf(
		"UPDATE supplier SET s_nationkey = 3, s_phone = '13' || substring(s_phone from 3) WHERE s_suppkey IN "+
			"(SELECT ps_suppkey FROM partsupp, part WHERE ps_partkey = p_partkey AND p_name LIKE 'midnight%%') "+
			"AND s_suppkey %% 5 = %d", k%5), fmt.Sprintf(
		"UPDATE partsupp SET ps_availqty = %d WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE 'midnight%%') "+
			"AND ps_suppkey IN (SELECT s_suppkey FROM supplier, nation WHERE s_nationkey = n_nationkey AND n_name = 'CANADA') "+
			"AND ps_partkey %% 2 = %d", qty, k%2))

	// Q22: balances of customers who never order (keys divisible by 3)
	// in the selected countries rise above the average or fall below it.
	bal := Decimal(900_000 + g.rng.IntN(99_999))
	if !up {
		bal = Decimal(-g.rng.IntN(99_999))
	}
	add("Q22: balances of customers without orders change", fmt.Sprintf(
		"UPDATE customer SET c_acctbal = %s WHERE c_custkey %% 3 = 0 AND c_custkey %% 2 = %d "+
			"AND substring(c_phone from 1 for 2) IN ('13', '31', '23', '29', '30', '18', '17')", bal, k%2))
	return out
}
