package nexmark

import (
	"fmt"
	"strings"
	"time"
)

// Table is one of the benchmark's tables.
type Table struct {
	Name string
	// Columns is the column list of CREATE TABLE, without parentheses.
	Columns string
	// EventTime is the column holding the event's time.
	EventTime string
}

// Tables are the three event tables, in the column order Inserts writes.
var Tables = []Table{
	{
		Name: "person",
		Columns: "id bigint PRIMARY KEY, name text, email_address text, credit_card text, " +
			"city text, state text, date_time timestamp, extra text",
		EventTime: "date_time",
	},
	{
		Name: "auction",
		Columns: "id bigint PRIMARY KEY, item_name text, description text, initial_bid bigint, " +
			"reserve bigint, date_time timestamp, expires timestamp, seller bigint, category bigint, extra text",
		EventTime: "date_time",
	},
	{
		Name: "bid",
		Columns: "auction bigint, bidder bigint, price bigint, channel text, url text, " +
			"date_time timestamp, extra text",
		EventTime: "date_time",
	},
}

// CreateTable returns the table's CREATE TABLE statement: plain SQL when
// appendOnly is false and lateness is 0, the form PostgreSQL takes. For
// RockStream the tables are APPEND ONLY (events are never changed), and
// with a positive lateness they declare the event-time column and
// lateness; both are RockStream extensions (docs/sql.md).
func (t Table) CreateTable(lateness time.Duration, appendOnly bool) string {
	s := fmt.Sprintf("CREATE TABLE %s (%s)", t.Name, t.Columns)
	if appendOnly {
		s += " APPEND ONLY"
	}
	if lateness > 0 {
		s += fmt.Sprintf(" WITH (event_time = '%s', lateness = '%s')", t.EventTime, intervalText(lateness))
	}
	return s
}

// CreateUnmaterialized is CreateTable for RockStream's unmaterialized
// form: APPEND ONLY WITH (materialized = false), with the event time and
// lateness when lateness is positive. The table keeps no rows; its views
// take every event, so they must be created before the first one
// (docs/sql.md, "Unmaterialized tables"). A table with a primary key
// (person, auction) stays materialized, since the key check reads its
// rows: only bid, which has none, keeps no rows.
func (t Table) CreateUnmaterialized(lateness time.Duration) string {
	if strings.Contains(t.Columns, "PRIMARY KEY") {
		return t.CreateTable(lateness, true)
	}
	s := fmt.Sprintf("CREATE TABLE %s (%s) APPEND ONLY WITH (materialized = false", t.Name, t.Columns)
	if lateness > 0 {
		s += fmt.Sprintf(", event_time = '%s', lateness = '%s'", t.EventTime, intervalText(lateness))
	}
	return s + ")"
}

// intervalText writes a duration as an interval literal of microseconds.
func intervalText(d time.Duration) string {
	return fmt.Sprintf("%d microseconds", d.Microseconds())
}

// SideInputTable is the bounded side input q13 joins bids with: one row
// per key 0–9,999.
const SideInputTable = "CREATE TABLE side_input (key bigint PRIMARY KEY, value text)"

// SideInputKeys is the number of keys of the side input.
const SideInputKeys = 10000

// SideInputRows returns the INSERT that fills SideInputTable: key k has
// value 'k'.
func SideInputRows() string {
	var b strings.Builder
	b.WriteString("INSERT INTO side_input VALUES ")
	for k := range SideInputKeys {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, '%d')", k, k)
	}
	return b.String()
}
