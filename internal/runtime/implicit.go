package runtime

import (
	"context"
	"strings"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/session"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/sql/fastinsert"
	"github.com/rockstream/rockstream/internal/sql/split"
)

// A simple-protocol Query message (psql -c "...", a driver's
// multi-statement string) runs as PostgreSQL runs it
// (https://www.postgresql.org/docs/15/protocol-flow.html#PROTOCOL-FLOW-MULTI-STATEMENT):
//
//   - Every statement is parsed before any runs: a syntax error anywhere
//     runs nothing (ParseMessage).
//   - Statements outside a transaction block run in one implicit block,
//     which commits when the message ends without error and rolls back
//     when a statement fails; the statements after the failure do not run
//     (the caller stops there). A message of one statement has no
//     implicit block: the statement is its own transaction.
//   - BEGIN turns the implicit block into an explicit one that outlives
//     the message, keeping the statements before it. COMMIT or ROLLBACK
//     ends the implicit block there, with the warning "there is no
//     transaction in progress", and the statements after it run in a new
//     implicit block. A message sent inside an explicit block continues
//     it; after a COMMIT or ROLLBACK of that block, the rest of the
//     message runs in an implicit block.
//   - SAVEPOINT, RELEASE and ROLLBACK TO fail in an implicit block (25P01),
//     as they do outside any block. A SET in a message that fails is
//     undone with the rest (session.Settings).
//
// An implicit block behaves as an explicit one while the message runs: it
// holds the write token from its first write, its views catch up with its
// writes before a read, and DDL in it commits or rolls back with it.

// Statement is one SQL statement parsed: RockStream's own statements by
// the front parser (internal/sql/ext), the rest by PostgreSQL's.
type Statement struct {
	// Text is the statement's text.
	Text string
	// Offset is the byte offset of Text in the message it came from.
	Offset int

	ext  ext.Statement
	tree *pg.ParseResult
	err  error // PostgreSQL's parser's error
}

// ParseStatement parses the text of one statement.
func ParseStatement(text string) *Statement {
	st := &Statement{Text: text}
	if st.ext = ext.Parse(text); st.ext.Kind != ext.None {
		return st
	}
	st.tree, st.err = parse(text)
	if st.err != nil {
		st.err = parseError(st.err)
	}
	return st
}

// SyntaxError returns the statement's syntax error, nil when it parsed.
// Other errors the parsers find (a SUBSCRIBE to a query, say) are the
// statement's to report when it runs.
func (st *Statement) SyntaxError() error {
	if st.ext.Kind != ext.None {
		if errs.CodeOf(st.ext.Err) == errs.SyntaxError {
			return st.ext.Err
		}
		return nil
	}
	return st.err
}

// ParseMessage splits the text of a Query message into its statements and
// parses each of them, before any runs. bad is the first statement with a
// syntax error, nil when there is none; when it is set, none of the
// message's statements may run, and the error's position is counted from
// bad.Offset.
func ParseMessage(text string) (stmts []*Statement, bad *Statement) {
	if tree, ok := fastinsert.Parse(text); ok {
		// One INSERT of literal rows, the whole message: no splitting.
		return []*Statement{{Text: text, tree: tree}}, nil
	}
	if err := memgov.Process().AdmitParse(int64(len(text))); err != nil {
		// Splitting scans the text with the parser's lexer, which
		// copies it as the parser does.
		st := &Statement{Text: text, err: err}
		return []*Statement{st}, st
	}
	parts := split.Statements(text)
	for i, s := range parts {
		if i == len(parts)-1 && !strings.HasSuffix(s.Text, ";") {
			// The last statement runs to the end of the message, as
			// PostgreSQL parses it: an error "at end of input" points
			// past the whitespace that ends the message.
			s.Text = text[s.Offset:]
		}
		st := ParseStatement(s.Text)
		st.Offset = s.Offset
		stmts = append(stmts, st)
		if bad == nil && st.SyntaxError() != nil {
			bad = st
		}
	}
	return stmts, bad
}

// BeginMessage starts a Query message. When it holds several statements
// (several), statements that run outside a transaction block run in the
// message's implicit block, which EndMessage ends; the caller runs the
// statements in order with ExecStatement, stops at the first that fails,
// and calls EndMessage in every case. An extended-protocol pipeline (the
// statements executed before a Sync) is a message of several statements,
// ended at Sync.
func (s *Session) BeginMessage(several bool) {
	s.inMessage = several
}

// EndMessage ends the Query message BeginMessage started: an implicit
// block still open commits, or rolls back when one of its statements
// failed. It returns the commit's error: the message's changes were then
// rolled back. An explicit block opened by the message stays open.
func (s *Session) EndMessage(ctx context.Context) error {
	s.inMessage = false
	t := s.txn
	if t == nil || !t.Implicit() {
		return nil
	}
	var err error
	if t.Failed() {
		s.rollback()
	} else {
		err = s.commit(ctx)
	}
	s.txn = nil
	if err != nil {
		return statementError(ctx, err)
	}
	return nil
}

// FailTransaction fails the open transaction block, explicit or implicit,
// as an error does in PostgreSQL: an explicit block then accepts only its
// end, an implicit one rolls back when its message ends. The caller tells
// the session of errors that happen outside its statements, such as a
// COPY TO STDOUT or SUBSCRIBE that fails while its rows stream.
func (s *Session) FailTransaction() {
	if s.txn != nil && s.txn.Block() {
		s.txn.Fail()
	}
}

// beginImplicitBlock opens the implicit block of the running message for a
// statement about to run outside a transaction block.
func (s *Session) beginImplicitBlock() {
	if s.inMessage && s.txn == nil {
		s.txn = &txn{Txn: session.NewImplicitBlock(s.defaultReadOnly()), started: s.statementStart}
	}
}

// PositionInMessage returns err, raised by st, with its position counted
// from the start of message, the text st came from, as PostgreSQL reports
// it.
func (st *Statement) PositionInMessage(message string, err error) error {
	e, ok := err.(*errs.Error)
	if !ok || e.Position <= 0 || st.Offset == 0 {
		return err
	}
	moved := *e
	moved.Position += utf8.RuneCountInString(message[:st.Offset])
	return &moved
}
