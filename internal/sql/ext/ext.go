// Package ext recognizes RockStream's own statements, which are not
// PostgreSQL syntax, before the rest of a statement goes to PostgreSQL's
// parser. The grammar is kept small and is documented in docs/sql.md:
//
//	EXPLAIN INCREMENTAL name
//	EXPLAIN INCREMENTAL query
//	EXPLAIN INCREMENTAL ESTIMATE name | query
//	query AS OF EPOCH n [ORDER BY ...] [LIMIT ...] [OFFSET ...] [FETCH ...]
//	SUBSCRIBE [TO] name [WITH (option [, ...])] [AS OF EPOCH n]
//	    option: SNAPSHOT [[=] boolean] | PROGRESS [[=] boolean]
//	COPY (SUBSCRIBE ... | query AS OF EPOCH n) TO STDOUT [copy options]
//	DECLARE name ... CURSOR ... FOR SUBSCRIBE ... | query AS OF EPOCH n
//	FETCH ... | MOVE ... WITH (TIMEOUT [=] 'interval')
//	CREATE SOURCE | CREATE SINK | ALTER SOURCE | ALTER SINK | DROP SOURCE |
//	DROP SINK | SHOW SOURCES | SHOW SINKS (connector.go, docs/connectors.md)
//	CHECKPOINT TO 'url' [KEEP n] (checkpoint.go)
//
// Anything else is not an extension statement and is passed through
// unchanged.
package ext

import (
	"regexp"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Kind is the kind of an extension statement.
type Kind uint8

const (
	// None: not an extension statement.
	None Kind = iota
	// ExplainIncremental: EXPLAIN INCREMENTAL of a view (Name) or a query
	// (Query); with Estimate, EXPLAIN INCREMENTAL ESTIMATE.
	ExplainIncremental
	// AsOfEpoch: a SELECT (Query) read as of epoch Epoch.
	AsOfEpoch
	// Subscribe: SUBSCRIBE to the changes of Name, with Snapshot and
	// Progress, from epoch Epoch when HasEpoch.
	Subscribe
	// CopyTo: COPY (Inner) TO STDOUT, Inner being an extension statement;
	// Query is the text after STDOUT (the COPY options).
	CopyTo
	// DeclareCursor: a cursor over Inner, an extension statement; Query
	// is the text up to and including FOR ("DECLARE c CURSOR FOR").
	DeclareCursor
	// Fetch: FETCH or MOVE (Query, standard SQL) with a timeout (Timeout,
	// the text of an interval).
	Fetch
	// CreateConnector: CREATE SOURCE or CREATE SINK (Connector).
	CreateConnector
	// AlterConnector: ALTER SOURCE|SINK ... PAUSE|RESUME (Connector).
	AlterConnector
	// DropConnector: DROP SOURCE|SINK (Connector).
	DropConnector
	// ShowConnectors: SHOW SOURCES or SHOW SINKS (Connector.Sink).
	ShowConnectors
	// Checkpoint: CHECKPOINT TO the location Query, keeping the Keep
	// newest checkpoints there when Keep > 0.
	Checkpoint
)

// Statement is a recognized extension statement.
type Statement struct {
	Kind Kind
	// Name is the relation named, lower-cased unless quoted.
	Name string
	// Query is the embedded SQL text, for PostgreSQL's parser: the query
	// of EXPLAIN INCREMENTAL and AS OF EPOCH, COPY's options (the text
	// after STDOUT), DECLARE's text up to FOR, the FETCH or MOVE without
	// its WITH clause.
	Query string
	// QueryOffset is the byte offset of Query in the original text, so
	// that error positions can be reported against the whole statement.
	QueryOffset int
	// Epoch is the epoch of AS OF EPOCH.
	Epoch uint64
	// HasEpoch says whether a SUBSCRIBE named an epoch.
	HasEpoch bool
	// Snapshot and Progress are SUBSCRIBE's options.
	Snapshot, Progress bool
	// Inner is the statement a COPY or DECLARE wraps.
	Inner *Statement
	// Timeout is FETCH's timeout, as written.
	Timeout string
	// Estimate is EXPLAIN INCREMENTAL ESTIMATE.
	Estimate bool
	// Keep is CHECKPOINT's KEEP count; 0 keeps every checkpoint.
	Keep int
	// Connector is a connector statement (connector.go).
	Connector *ConnectorStmt
	// Err is set when the text is an extension statement with a syntax
	// error; the statement must fail with it.
	Err error
}

var (
	explainRe  = regexp.MustCompile(`(?is)^(\s*EXPLAIN\s+INCREMENTAL\s+)(.*?)\s*;?\s*$`)
	estimateRe = regexp.MustCompile(`(?is)^ESTIMATE\s+(\S.*)$`)
	identRe    = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")(?:\.(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+"))?$`)
)

// Parse recognizes an extension statement in text.
func Parse(text string) Statement {
	for _, p := range []func(string) Statement{parseSubscribe, parseCopyTo, parseDeclare, parseFetch, parseConnector, parseCheckpoint} {
		if st := p(text); st.Kind != None {
			return st
		}
	}
	m := explainRe.FindStringSubmatchIndex(text)
	if m == nil {
		return parseAsOf(text)
	}
	rest, off, estimate := text[m[4]:m[5]], m[4], false
	if e := estimateRe.FindStringSubmatchIndex(rest); e != nil {
		// ESTIMATE is a keyword only with something after it: a view may
		// be called estimate.
		rest, off, estimate = rest[e[2]:], off+e[2], true
	}
	if identRe.MatchString(rest) {
		return Statement{Kind: ExplainIncremental, Name: identName(rest), Estimate: estimate}
	}
	return Statement{Kind: ExplainIncremental, Query: rest, QueryOffset: off, Estimate: estimate}
}

// identName folds an identifier as PostgreSQL does: unquoted parts are
// lower-cased, quoted ones kept with doubled quotes undone. A "public."
// qualifier is dropped.
func identName(s string) string {
	var parts []string
	for s != "" {
		var part string
		if s[0] == '"' {
			end := 1
			for end < len(s) {
				if s[end] == '"' {
					if end+1 < len(s) && s[end+1] == '"' {
						end += 2
						continue
					}
					break
				}
				end++
			}
			part = strings.ReplaceAll(s[1:end], `""`, `"`)
			s = s[end+1:]
		} else {
			i := strings.IndexByte(s, '.')
			if i < 0 {
				i = len(s)
			}
			part = strings.ToLower(s[:i])
			s = s[i:]
		}
		parts = append(parts, part)
		s = strings.TrimPrefix(s, ".")
	}
	if len(parts) == 2 && parts[0] == "public" {
		parts = parts[1:]
	}
	return strings.Join(parts, ".")
}

// parseAsOf recognizes query AS OF EPOCH n, the clause ending the query
// or coming before its ORDER BY, LIMIT, OFFSET or FETCH. It reads the
// text with PostgreSQL's scanner, so that the words inside string
// literals, quoted identifiers, comments and parentheses (a subquery) are
// not taken for the clause. Query is the text without the clause, which
// is blanked out (its line breaks kept) so that positions and lines in it
// stay those of the text.
func parseAsOf(text string) Statement {
	// Only a statement that names an epoch can match; checking that first
	// spares the scanner every long statement (a many-row INSERT).
	if !containsFold(text, "epoch") {
		return Statement{}
	}
	scan, err := pg.Scan(text)
	if err != nil {
		return Statement{}
	}
	var toks []*pg.ScanToken
	for _, t := range scan.Tokens {
		if t.Token != pg.Token_SQL_COMMENT && t.Token != pg.Token_C_COMMENT {
			toks = append(toks, t)
		}
	}
	word := func(t *pg.ScanToken) string { return text[t.Start:t.End] }
	depth := 0
	for i, t := range toks {
		switch t.Token {
		case pg.Token_ASCII_40:
			depth++
			continue
		case pg.Token_ASCII_41:
			depth--
			continue
		}
		if depth != 0 || i == 0 || i+3 >= len(toks) || t.Token != pg.Token_AS || toks[i+1].Token != pg.Token_OF ||
			!strings.EqualFold(word(toks[i+2]), "epoch") {
			continue
		}
		num := toks[i+3]
		if num.Token != pg.Token_ICONST && num.Token != pg.Token_FCONST {
			return Statement{}
		}
		epoch, err := strconv.ParseUint(word(num), 10, 64)
		if err != nil {
			return Statement{}
		}
		rest := toks[i+4:]
		for k, r := range rest {
			if r.Token == pg.Token_ASCII_59 && k != len(rest)-1 {
				return Statement{} // another statement follows
			}
		}
		if len(rest) > 0 && rest[0].Token == pg.Token_ASCII_59 {
			rest = nil
		}
		if len(rest) > 0 {
			switch rest[0].Token {
			case pg.Token_ORDER, pg.Token_LIMIT, pg.Token_OFFSET, pg.Token_FETCH:
			default:
				return Statement{}
			}
		}
		start := int(toks[0].Start)
		end := int(toks[i-1].End)
		query := text[start:end]
		if len(rest) > 0 {
			end = int(rest[len(rest)-1].End)
			if rest[len(rest)-1].Token == pg.Token_ASCII_59 {
				end = int(rest[len(rest)-1].Start)
			}
			blank := []byte(text[toks[i-1].End:rest[0].Start])
			for k, c := range blank {
				if c != '\n' {
					blank[k] = ' '
				}
			}
			query += string(blank) + strings.TrimRight(text[rest[0].Start:end], " \t\n\r\f\v;")
		}
		return Statement{Kind: AsOfEpoch, Query: query, QueryOffset: start, Epoch: epoch}
	}
	return Statement{}
}

// containsFold reports whether s contains the lower-case ASCII word w in
// any case.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i]|0x20 == w[0] && strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}
