// Package tpch generates TPC-H data and workloads: the eight tables of the
// TPC-H specification at a chosen scale factor, the 22 queries, and
// refresh steps that insert, delete and update rows. It is written from
// the public specification (TPC-H 3.0, clauses 1.4 and 2.4 for the schema
// and queries, 4.2 for the data, 2.5 for the refresh functions); it is
// not the reference dbgen and does not reproduce its exact rows.
//
// What follows the specification: the fixed NATION and REGION rows; keys
// and cardinalities at the scale factor (SUPPLIER SF·10,000, PART
// SF·200,000 with four PARTSUPP rows each, CUSTOMER SF·150,000, ORDERS
// SF·1,500,000 with 1 to 7 lineitems each, order keys sparse so that RF1
// has room); names ("Supplier#000000001", part names of five colors),
// types, containers, brands, segments, priorities, ship instructions and
// modes drawn from the specification's lists; the value ranges of
// balances, quantities, discounts, taxes, sizes and costs; P_RETAILPRICE
// as a function of the key; dates (order dates in 1992-01-01 ..
// 1998-08-02, ship, commit and receipt dates at the specified offsets);
// L_RETURNFLAG and L_LINESTATUS from the dates against 1995-06-17,
// O_ORDERSTATUS from the lineitems and O_TOTALPRICE as their sum;
// phone numbers with the nation's country code; comments cut from text of
// the specification's grammar, with "Customer ... Complaints" in SF·5
// supplier comments. Customers whose key is a multiple of 3 never order.
//
// Where it departs, for small scale factors: the text pool is 1 MB rather
// than 300 MB; a part's four suppliers use a fallback stride when the
// specification's formula would repeat one (below ~100 suppliers); at
// least one supplier gets a complaint.
//
// Everything is deterministic for a Config: New returns the same Data for
// the same seed and scale factor, and the same sequence of calls to the
// refresh methods returns the same statements. A Generator remembers the
// orders that exist, so that RF2 and the updates name existing rows and
// RF1 uses keys never used before.
//
// The data is written as SQL (Data.Statements, Transaction.Statements)
// that PostgreSQL and RockStream both accept, so that tests can run the
// same changes on both and compare the 22 queries (Queries) maintained as
// materialized views with PostgreSQL's answers.
package tpch
