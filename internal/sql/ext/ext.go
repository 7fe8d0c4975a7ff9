// Package ext recognizes RockStream's own statements, which are not
// PostgreSQL syntax, before the rest of a statement goes to PostgreSQL's
// parser. The grammar is kept small and is documented in docs/sql.md:
//
//	EXPLAIN INCREMENTAL name
//	EXPLAIN INCREMENTAL query
//	query AS OF EPOCH n
//	SUBSCRIBE [TO] name [WITH (option [, ...])] [AS OF EPOCH n]
//	    option: SNAPSHOT [[=] boolean] | PROGRESS [[=] boolean]
//	COPY (SUBSCRIBE ... | query AS OF EPOCH n) TO STDOUT [copy options]
//	DECLARE name ... CURSOR ... FOR SUBSCRIBE ... | query AS OF EPOCH n
//	FETCH ... | MOVE ... WITH (TIMEOUT [=] 'interval')
//	CREATE SOURCE | CREATE SINK | ALTER SOURCE | ALTER SINK | DROP SOURCE |
//	DROP SINK | SHOW SOURCES | SHOW SINKS (connector.go, docs/connectors.md)
//
// Anything else is not an extension statement and is passed through
// unchanged.
package ext

import (
	"regexp"
	"strconv"
	"strings"
)

// Kind is the kind of an extension statement.
type Kind uint8

const (
	// None: not an extension statement.
	None Kind = iota
	// ExplainIncremental: EXPLAIN INCREMENTAL of a view (Name) or a query
	// (Query).
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
	// Connector is a connector statement (connector.go).
	Connector *ConnectorStmt
	// Err is set when the text is an extension statement with a syntax
	// error; the statement must fail with it.
	Err error
}

var (
	explainRe = regexp.MustCompile(`(?is)^(\s*EXPLAIN\s+INCREMENTAL\s+)(.*?)\s*;?\s*$`)
	asOfRe    = regexp.MustCompile(`(?is)^\s*(.*?\S)\s+AS\s+OF\s+EPOCH\s+([0-9]+)\s*;?\s*$`)
	identRe   = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")(?:\.(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+"))?$`)
)

// Parse recognizes an extension statement in text.
func Parse(text string) Statement {
	for _, p := range []func(string) Statement{parseSubscribe, parseCopyTo, parseDeclare, parseFetch, parseConnector} {
		if st := p(text); st.Kind != None {
			return st
		}
	}
	m := explainRe.FindStringSubmatchIndex(text)
	if m == nil {
		return parseAsOf(text)
	}
	rest := text[m[4]:m[5]]
	if identRe.MatchString(rest) {
		return Statement{Kind: ExplainIncremental, Name: identName(rest)}
	}
	return Statement{Kind: ExplainIncremental, Query: rest, QueryOffset: m[4]}
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

func parseAsOf(text string) Statement {
	// Only a statement ending in an epoch number can match; checking that
	// first spares the regular expression a scan of every long statement
	// (a many-row INSERT).
	end := strings.TrimRight(text, " \t\n\r\f\v")
	end = strings.TrimRight(strings.TrimSuffix(end, ";"), " \t\n\r\f\v")
	if end == "" || end[len(end)-1] < '0' || end[len(end)-1] > '9' {
		return Statement{}
	}
	m := asOfRe.FindStringSubmatchIndex(text)
	if m == nil {
		return Statement{}
	}
	epoch, err := strconv.ParseUint(text[m[4]:m[5]], 10, 64)
	if err != nil {
		return Statement{}
	}
	return Statement{Kind: AsOfEpoch, Query: text[m[2]:m[3]], QueryOffset: m[2], Epoch: epoch}
}
