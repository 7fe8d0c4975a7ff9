package nexmark

import (
	"fmt"
	"strings"
)

// Query is one of the benchmark's queries.
type Query struct {
	// Name is the view's name: q0 ... q22.
	Name string
	// Title is the query's name in the benchmark.
	Title string
	// Note says what the query computes and how it differs from the
	// benchmark's usual SQL text, for the documentation.
	Note string
	// SQL is the view's query in RockStream's SQL.
	SQL string
	// Postgres is the same query in PostgreSQL's SQL: time windows
	// written with date_bin and generate_series. Equal to SQL when the
	// query uses no extension.
	Postgres string
	// Unsupported, when not empty, says why RockStream rejects the query:
	// creating its view fails with SQLSTATE 0A000 and a message naming
	// Construct, the rejected part of the query.
	Unsupported string
	Construct   string
}

// CreateView returns the statement that creates the query's materialized
// view in RockStream.
func (q Query) CreateView() string {
	return "CREATE MATERIALIZED VIEW " + q.Name + " AS\n" + q.SQL
}

// CreateViewPostgres returns the statement that creates the same query as
// a plain view in PostgreSQL: always fresh, it is what the materialized
// view must equal.
func (q Query) CreateViewPostgres() string {
	return "CREATE VIEW " + q.Name + " AS\n" + q.Postgres
}

// Lookup returns the query named name.
func Lookup(name string) (Query, bool) {
	for _, q := range Queries() {
		if q.Name == name {
			return q, true
		}
	}
	return Query{}, false
}

// dialect writes the time-window FROM items of one SQL dialect.
type dialect struct {
	// tumble returns a FROM item (to be followed by an alias) with rel's
	// columns, window_start and window_end, for tumbling windows of size
	// over column col.
	tumble func(rel, col, size string) string
	// hop is the same for hopping windows.
	hop func(rel, col, slide, size string) string
}

var rockstreamDialect = dialect{
	tumble: func(rel, col, size string) string {
		return fmt.Sprintf("TUMBLE(%s, %s, INTERVAL '%s')", rel, col, size)
	},
	hop: func(rel, col, slide, size string) string {
		return fmt.Sprintf("HOP(%s, %s, INTERVAL '%s', INTERVAL '%s')", rel, col, slide, size)
	},
}

// postgresDialect writes the windows as docs/sql.md defines them: aligned
// to the Unix epoch, [window_start, window_end), rows with infinite or
// NULL times in no window.
var postgresDialect = dialect{
	tumble: func(rel, col, size string) string {
		bin := fmt.Sprintf("date_bin(INTERVAL '%s', t.%s, TIMESTAMP '1970-01-01')", size, col)
		return fmt.Sprintf("(SELECT t.*, %[1]s AS window_start, %[1]s + INTERVAL '%[2]s' AS window_end FROM %[3]s t WHERE isfinite(t.%[4]s))",
			bin, size, rel, col)
	},
	hop: func(rel, col, slide, size string) string {
		bin := fmt.Sprintf("date_bin(INTERVAL '%s', t.%s, TIMESTAMP '1970-01-01')", slide, col)
		return fmt.Sprintf("(SELECT t.*, ws AS window_start, ws + INTERVAL '%[1]s' AS window_end "+
			"FROM (SELECT * FROM %[2]s WHERE isfinite(%[3]s)) t, "+
			"generate_series(%[4]s - (INTERVAL '%[1]s' - INTERVAL '%[5]s'), %[4]s, INTERVAL '%[5]s') AS ws)",
			size, rel, col, bin, slide)
	},
}

// Queries returns q0–q22 in order.
func Queries() []Query {
	out := make([]Query, 0, len(queryDefs))
	for _, d := range queryDefs {
		q := Query{Name: d.name, Title: d.title, Note: d.note, Unsupported: d.unsupported, Construct: d.construct}
		q.SQL = strings.TrimSpace(d.sql(rockstreamDialect))
		q.Postgres = strings.TrimSpace(d.sql(postgresDialect))
		out = append(out, q)
	}
	return out
}

// queryDef defines a query once for both dialects.
type queryDef struct {
	name, title, note      string
	sql                    func(d dialect) string
	unsupported, construct string
}

// plain wraps a query that uses no time window.
func plain(sql string) func(dialect) string { return func(dialect) string { return sql } }

// priceRanks are the three price ranges of q15–q17's statistics.
var priceRanks = []string{"price < 10000", "price >= 10000 AND price < 1000000", "price >= 1000000"}

// rankCounts returns count columns of q15–q17, one per line: the
// aggregate count (of rows, or of distinct values) in total and per price
// range.
func rankCounts(what, count string) string {
	cols := []string{fmt.Sprintf("%s AS total_%s", count, what)}
	for i, r := range priceRanks {
		cols = append(cols, fmt.Sprintf("%s FILTER (WHERE %s) AS rank%d_%s", count, r, i+1, what))
	}
	return strings.Join(cols, ",\n       ")
}

// bidStatistics are the statistics columns q15 and q16 compute.
var bidStatistics = rankCounts("bids", "count(*)") + ",\n       " +
	rankCounts("bidders", "count(DISTINCT bidder)") + ",\n       " +
	rankCounts("auctions", "count(DISTINCT auction)")

// winningBids is, per auction, its highest bid while it was open: the
// common part of q4 and q6.
const winningBids = `SELECT a.id, a.seller, a.category, a.expires, max(b.price) AS final
      FROM auction a JOIN bid b ON a.id = b.auction
      WHERE b.date_time BETWEEN a.date_time AND a.expires
      GROUP BY a.id, a.seller, a.category, a.expires`

var queryDefs = []queryDef{
	{name: "q0", title: "passthrough",
		note: "Every bid, unchanged.",
		sql: plain(`
SELECT auction, bidder, price, date_time, extra FROM bid`)},

	{name: "q1", title: "currency conversion",
		note: "Every bid with its price converted to euros (× 0.908).",
		sql: plain(`
SELECT auction, bidder, 0.908 * price AS price, date_time, extra FROM bid`)},

	{name: "q2", title: "selection",
		note: "The bids on every 123rd auction.",
		sql: plain(`
SELECT auction, price FROM bid WHERE auction % 123 = 0`)},

	{name: "q3", title: "local item suggestion",
		note: "Auctions in category 10 by sellers living in Oregon, Idaho or California: a join of auction and person.",
		sql: plain(`
SELECT p.name, p.city, p.state, a.id
FROM auction a JOIN person p ON a.seller = p.id
WHERE a.category = 10 AND (p.state = 'OR' OR p.state = 'ID' OR p.state = 'CA')`)},

	{name: "q4", title: "average price per category",
		note: "Per category, the average winning price of its auctions: per auction the highest bid placed while it was open (a join and a grouped max), then the average of those per category (an aggregate over an aggregate).",
		sql: plain(`
SELECT category, avg(final) AS avg
FROM (` + winningBids + `) q
GROUP BY category`)},

	{name: "q5", title: "hot items",
		note: "The auctions with the most bids in each 10-second window sliding every 2 seconds: the count of bids per auction and window, joined with the largest count of the window.",
		sql: func(d dialect) string {
			return `
WITH counts AS (
  SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
  FROM ` + d.hop("bid", "date_time", "2 seconds", "10 seconds") + ` AS h
  GROUP BY auction, window_start, window_end)
SELECT ab.auction, ab.num
FROM counts ab
JOIN (SELECT max(num) AS maxn, starttime, endtime FROM counts GROUP BY starttime, endtime) mb
  ON ab.starttime = mb.starttime AND ab.endtime = mb.endtime AND ab.num >= mb.maxn`
		}},

	{name: "q6", title: "average selling price by seller",
		note: "Per seller, the average winning price of their last 10 auctions. The benchmark averages over the last 10 closed auctions; which auctions are closed depends on the wall clock, which a view cannot read, so every auction counts with its highest bid so far among those placed while it was open, and the window orders a seller's auctions by expiry (then id, to make the order total).",
		sql: plain(`
SELECT seller, id AS auction,
       avg(final) OVER (PARTITION BY seller ORDER BY expires, id
                        ROWS BETWEEN 9 PRECEDING AND CURRENT ROW) AS avg
FROM (` + winningBids + `) q`)},

	{name: "q7", title: "highest bid",
		note: "The highest bids of each 10-second tumbling window: the window's maximum price joined back to the bids.",
		sql: func(d dialect) string {
			return `
SELECT b.auction, b.price, b.bidder, b.date_time
FROM bid b
JOIN (SELECT max(price) AS maxprice, window_end AS date_time
      FROM ` + d.tumble("bid", "date_time", "10 seconds") + ` AS w
      GROUP BY window_start, window_end) b1
  ON b.price = b1.maxprice
WHERE b.date_time BETWEEN b1.date_time - INTERVAL '10 seconds' AND b1.date_time`
		}},

	{name: "q8", title: "monitor new users",
		note: "People who opened an auction in the same 10-second window as they registered: a join of two windowed aggregates.",
		sql: func(d dialect) string {
			return `
SELECT p.id, p.name, p.starttime
FROM (SELECT id, name, window_start AS starttime, window_end AS endtime
      FROM ` + d.tumble("person", "date_time", "10 seconds") + ` AS w
      GROUP BY id, name, window_start, window_end) p
JOIN (SELECT seller, window_start AS starttime, window_end AS endtime
      FROM ` + d.tumble("auction", "date_time", "10 seconds") + ` AS w
      GROUP BY seller, window_start, window_end) a
  ON p.id = a.seller AND p.starttime = a.starttime AND p.endtime = a.endtime`
		}},

	{name: "q9", title: "winning bids",
		note: "Per auction, its winning bid (the highest price, the earliest among equal prices) with the auction's columns: a top-1 per partition over a join.",
		sql: plain(`
SELECT id, item_name, description, initial_bid, reserve, date_time, expires, seller, category, extra,
       auction, bidder, price, bid_date_time, bid_extra
FROM (SELECT a.*, b.auction, b.bidder, b.price, b.date_time AS bid_date_time, b.extra AS bid_extra,
             row_number() OVER (PARTITION BY a.id ORDER BY b.price DESC, b.date_time) AS rownum
      FROM auction a JOIN bid b ON a.id = b.auction
      WHERE b.date_time BETWEEN a.date_time AND a.expires) w
WHERE rownum <= 1`)},

	{name: "q10", title: "log to file",
		note: "Every bid with its day and its hour and minute as text. The benchmark writes bids to files partitioned by these; the view holds the rows.",
		sql: plain(`
SELECT auction, bidder, price, date_time, extra,
       to_char(date_time, 'YYYY-MM-DD') AS date, to_char(date_time, 'HH24:MI') AS time
FROM bid`)},

	{name: "q11", title: "user sessions",
		note: "Per bidder, its sessions: runs of bids at most 10 seconds apart, with their count, start and end. Other systems write this with a SESSION window table function, which RockStream rejects (0A000); this form in plain SQL is maintained exactly: lag() finds the gaps, a running sum() numbers the sessions.",
		sql: plain(`
SELECT bidder, count(*) AS bid_count, min(date_time) AS starttime,
       max(date_time) + INTERVAL '10 seconds' AS endtime
FROM (SELECT bidder, date_time,
             sum(starts) OVER (PARTITION BY bidder ORDER BY date_time ROWS UNBOUNDED PRECEDING) AS session
      FROM (SELECT bidder, date_time,
                   CASE WHEN date_time - lag(date_time) OVER (PARTITION BY bidder ORDER BY date_time)
                             <= INTERVAL '10 seconds'
                        THEN 0 ELSE 1 END AS starts
            FROM bid) s) t
GROUP BY bidder, session`)},

	{name: "q12", title: "processing-time windows",
		note: "Not supported: bids per bidder in 10-second windows of processing time (PROCTIME() in the benchmark). A view holds a function of its inputs, and the wall clock is not one: creating it fails with 0A000 naming now().",
		sql: plain(`
SELECT bidder, count(*) AS bid_count,
       date_bin(INTERVAL '10 seconds', now(), TIMESTAMPTZ '1970-01-01 00:00:00+00') AS window_start
FROM bid
GROUP BY bidder, window_start`),
		unsupported: "processing time: a view's contents must be a function of its inputs, and now() is not",
		construct:   "now()"},

	{name: "q13", title: "bounded side input join",
		note: "Bids joined with a bounded side input table on auction mod 10,000. Other systems look the side input up as of the bid's processing time, so past results never change; here it is an ordinary join, so a change to the side input updates the bids already joined (the oracle test changes it mid-stream).",
		sql: plain(`
SELECT b.auction, b.bidder, b.price, b.date_time, s.value
FROM bid b JOIN side_input s ON b.auction % 10000 = s.key`)},

	{name: "q14", title: "calculation",
		note: "A projection with arithmetic, a CASE over the hour and a character count. The benchmark's count_char UDF is length(extra) − length(replace(extra, 'c', '')).",
		sql: plain(`
SELECT auction, bidder, 0.908 * price AS price,
       CASE WHEN extract(hour FROM date_time) BETWEEN 8 AND 18 THEN 'dayTime'
            WHEN extract(hour FROM date_time) <= 6 OR extract(hour FROM date_time) >= 20 THEN 'nightTime'
            ELSE 'otherTime' END AS bid_time_type,
       date_time, extra,
       length(extra) - length(replace(extra, 'c', '')) AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000`)},

	{name: "q15", title: "bidding statistics report",
		note: "Per day, the number of bids, bidders and auctions, in total and per price range: count(*) and count(DISTINCT ...) with FILTER.",
		sql: plain(`
SELECT to_char(date_time, 'YYYY-MM-DD') AS day,
       ` + bidStatistics + `
FROM bid
GROUP BY to_char(date_time, 'YYYY-MM-DD')`)},

	{name: "q16", title: "channel statistics report",
		note: "The same statistics per channel and day, with the day's last minute seen.",
		sql: plain(`
SELECT channel, to_char(date_time, 'YYYY-MM-DD') AS day,
       max(to_char(date_time, 'HH24:MI')) AS minute,
       ` + bidStatistics + `
FROM bid
GROUP BY channel, to_char(date_time, 'YYYY-MM-DD')`)},

	{name: "q17", title: "auction statistics report",
		note: "Per auction and day, the number of bids per price range and the minimum, maximum, average and sum of prices.",
		sql: plain(`
SELECT auction, to_char(date_time, 'YYYY-MM-DD') AS day,
       ` + rankCounts("bids", "count(*)") + `,
       min(price) AS min_price, max(price) AS max_price, avg(price) AS avg_price, sum(price) AS sum_price
FROM bid
GROUP BY auction, to_char(date_time, 'YYYY-MM-DD')`)},

	{name: "q18", title: "find last bid",
		note: "Per bidder and auction, the latest bid: a deduplication with row_number() = 1.",
		sql: plain(`
SELECT auction, bidder, price, channel, url, date_time, extra
FROM (SELECT *, row_number() OVER (PARTITION BY bidder, auction ORDER BY date_time DESC) AS rank_number
      FROM bid) b
WHERE rank_number <= 1`)},

	{name: "q19", title: "auction top-10 price",
		note: "Per auction, its 10 highest bids with their rank. Ties on price are broken by date_time, unique per event in the generated stream, so the ranks are the ones PostgreSQL gives.",
		sql: plain(`
SELECT *
FROM (SELECT *, row_number() OVER (PARTITION BY auction ORDER BY price DESC, date_time) AS rank_number
      FROM bid) b
WHERE rank_number <= 10`)},

	{name: "q20", title: "expand bid with auction",
		note: "Bids on category-10 auctions with the auction's columns (date_time and extra of the auction renamed).",
		sql: plain(`
SELECT b.auction, b.bidder, b.price, b.channel, b.url, b.date_time, b.extra,
       a.item_name, a.description, a.initial_bid, a.reserve, a.date_time AS auction_date_time,
       a.expires, a.seller, a.category, a.extra AS auction_extra
FROM bid b JOIN auction a ON b.auction = a.id
WHERE a.category = 10`)},

	{name: "q21", title: "add channel id",
		note: "Bids through a hot channel or whose URL carries a channel_id, with the channel's id: a code for each hot channel, else the URL's channel_id parameter. The benchmark uses REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2); RockStream rejects regular expressions, and split_part finds the same text in the generated URLs, where channel_id always follows an '&'.",
		sql: plain(`
SELECT auction, bidder, price, channel,
       CASE lower(channel) WHEN 'apple' THEN '0' WHEN 'google' THEN '1'
                           WHEN 'facebook' THEN '2' WHEN 'baidu' THEN '3'
            ELSE split_part(split_part(url, '&channel_id=', 2), '&', 1) END AS channel_id
FROM bid
WHERE strpos(url, '&channel_id=') > 0 OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')`)},

	{name: "q22", title: "get URL directories",
		note: "The first three directories of each bid's URL. The benchmark's SPLIT_INDEX counts from 0; split_part counts from 1.",
		sql: plain(`
SELECT auction, bidder, price, channel,
       split_part(url, '/', 4) AS dir1, split_part(url, '/', 5) AS dir2, split_part(url, '/', 6) AS dir3
FROM bid`)},
}
