package runtime

import (
	"time"

	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/types"
)

// The time a statement reads. now(), current_timestamp and the other
// functions of the transaction's time read when the transaction began: the
// start of a transaction block's BEGIN, of the first statement of a
// message's implicit block, or else of the statement itself; statement_timestamp() reads when the statement began.
// The binder makes each a constant of the statement (sql.Clock), so every
// row, and every statement of a transaction, sees one value. Views and
// column defaults are bound without a clock and refuse them.

// now is the engine's clock (Options.Clock).
func (e *Engine) now() time.Time {
	if e.opts.Clock != nil {
		return e.opts.Clock()
	}
	return time.Now()
}

// clock is the running statement's sql.Clock.
func (s *Session) clock() sql.Clock {
	c := sql.Clock{Transaction: s.statementStart, Statement: s.statementStart, Zone: s.Zone(), Unfixed: s.unfixed()}
	if s.txn != nil && !s.txn.started.IsZero() {
		c.Transaction = s.txn.started
	}
	return c
}

// describeParams is declaredTypes for binding a statement that is
// prepared, not run: its clock is the time of the Prepare, which only
// lets now() bind (each execution binds again with its own clock).
func (s *Session) describeParams(declared []types.Type) *statementParams {
	p := declaredTypes(declared)
	now := s.eng.now()
	p.clock = sql.Clock{Transaction: now, Statement: now, Zone: s.Zone()}
	p.zone = s.Zone()
	p.random = &s.random
	return p
}

// params is the running statement's parameters, as ExecPrepared declared
// them (none otherwise), with its clock.
func (s *Session) params() *statementParams {
	var p statementParams
	if s.declared != nil {
		p = *s.declared
	}
	p.clock = s.clock()
	p.zone = s.Zone()
	p.random = &s.random
	return &p
}

// datedZone is the session time zone with the current date of the
// running statement's transaction (or of now, between statements), for
// what reads text outside a bound statement: parameters and COPY input
// of time with time zone without an offset.
func (s *Session) datedZone() types.Zone {
	at := s.clock().Transaction
	if at.IsZero() {
		at = s.eng.now()
	}
	return s.Zone().OnDate(at)
}
