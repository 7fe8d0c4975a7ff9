// Package nexmark generates the Nexmark benchmark's event stream and holds
// the benchmark's queries q0–q22 written for RockStream and, for the
// oracle tests, for PostgreSQL.
//
// # The model
//
// Nexmark models an online auction house with three kinds of event: a new
// person (who may sell and bid), a new auction (an item a person sells,
// open from its date_time until it expires) and a bid (a person's offer on
// an auction). Events come in a fixed proportion: of every 50 events, 1 is
// a person, 3 are auctions and 46 are bids, always in the same positions
// (event numbers ≡ 0 mod 50 are persons, 1–3 auctions, the rest bids).
//
// Identifiers are derived from the event number, so the stream needs no
// memory of what it produced: the person of event n has id 1000 + the
// number of persons before it, and likewise auctions. Bids and auctions
// refer to people and auctions that exist or are about to: a bid's auction
// is either a hot auction (the latest multiple of 100 among the auctions so
// far, half of the bids) or one of the last 100 auctions (plus a lead of
// 10 not yet created); bidders and sellers are either hot (a multiple of
// 100, plus 1 for bidders) or one of the last 1,000 people (plus a lead of
// 10). Prices are 100 × 10^u for u uniform in [0, 6), rounded: most bids
// are small, a few are very large. Auctions have 5 categories (10–14) and
// last up to twice the time in which 100 auctions are created. People live
// in a few cities of six western US states. Half of the bids come through
// one of four hot channels (Google, Facebook, Baidu, Apple), the rest
// through one of 10,000 numbered channels, whose URL usually carries the
// channel's id as a query parameter. Every event has an `extra` text that
// pads it to the benchmark's average size (persons 200 bytes, auctions
// 500, bids 100).
//
// Time: event n happens at BaseTime + n / EventsPerSecond, in microseconds,
// so no two events share a date_time. With OutOfOrderGroupSize g > 1 the
// stream is emitted out of order within consecutive groups of g events (each
// group shuffled, as Nexmark's out-of-order option does);
// an event is then never more than g − 1 inter-event delays late.
//
// # Determinism
//
// Each event's random fields come from a generator seeded by (Config.Seed,
// event number) alone, so a stream is the same for the same Config, any
// event can be produced on its own (Generator.Event), and a stream can be
// split across producers.
//
// This is written from the public description of the benchmark (Tucker et
// al., "NEXMark – A Benchmark for Queries over Data Streams", and the
// generator rules that streaming systems share); it reproduces the model,
// not any implementation's exact random numbers.
package nexmark
