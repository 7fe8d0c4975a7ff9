package oracle

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Runner runs a script's statements on PostgreSQL (the reference) and on a
// system under test, and compares them after every statement:
//
//   - a query's result: columns (names and type OIDs) and rows, in order
//     when the query has a top-level ORDER BY (unless marked unordered),
//     as a multiset otherwise;
//   - a statement's command tag, or its failure and SQLSTATE;
//   - after every statement that is not a query, every view and
//     materialized view created so far, read through each system's
//     observer session, as a multiset of rows.
type Runner struct {
	Ref *Postgres
	SUT Engine
	// Source names the script in reports.
	Source string
	// Strict treats a PostgreSQL failure the script does not announce
	// with an "error" directive (or a different one than announced) as a
	// mistake in the script, which ends the run. Scripts run strict;
	// generated workloads, whose statements may fail, do not.
	Strict bool
	// SkipEngineOnly skips statements marked rockstream-error: for a
	// system under test that is not RockStream.
	SkipEngineOnly bool
	// ViewsBetweenTransactions compares the views only after statements
	// that leave no transaction block open. Inside a block the observers
	// see the state before it, which the comparison after the statement
	// that opened it already covered: workloads of large transactions
	// set it to save the repeated reads.
	ViewsBetweenTransactions bool

	// inBlock is set while the script's transaction block is open.
	inBlock bool
	// views are the views created so far, in creation order.
	views []trackedView
	// reported holds, per view, the difference last reported for it, so
	// that a difference that persists unchanged is reported once.
	reported map[string]string
	// early is set while the system under test has aborted a transaction
	// block because a statement in it made a materialized view fail,
	// where PostgreSQL reports such failures at COMMIT. PostgreSQL goes on
	// with the block as the script says; at its end the two outcomes are
	// compared (see endEarly).
	early *earlyFailure
}

// earlyFailure is a view failure the system under test reported before
// COMMIT.
type earlyFailure struct {
	line int
	sql  string
	err  error
}

type trackedView struct {
	name         string
	materialized bool
}

// Finding is one disagreement between the systems.
type Finding struct {
	// Source, Line and SQL locate the statement after which it was seen.
	Source string
	Line   int
	SQL    string
	// What describes the disagreement (one or more lines).
	What string
}

func (f Finding) String() string {
	loc := f.Source
	if f.Line > 0 {
		loc = fmt.Sprintf("%s:%d", f.Source, f.Line)
	}
	return fmt.Sprintf("%s: %s\n%s", loc, oneLine(f.SQL), strings.TrimRight(f.What, "\n"))
}

// oneLine shortens a statement for a report header.
func oneLine(sql string) string {
	s := strings.Join(strings.Fields(sql), " ")
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

// ScriptError is a mistake in a script (PostgreSQL did not behave as the
// script says it would), as opposed to a disagreement between systems.
type ScriptError struct {
	Source string
	Line   int
	Msg    string
}

func (e *ScriptError) Error() string {
	return fmt.Sprintf("%s:%d: script error: %s", e.Source, e.Line, e.Msg)
}

// Run runs stmts in order and returns the findings, stopping after
// maxFindings of them (0: no limit). An error (a script mistake, a system
// that panicked, hung or could not be reached) ends the run.
func (r *Runner) Run(ctx context.Context, stmts []Statement, maxFindings int) ([]Finding, error) {
	var all []Finding
	for _, st := range stmts {
		fs, err := r.Step(ctx, st)
		all = append(all, fs...)
		if err != nil {
			return all, err
		}
		if maxFindings > 0 && len(all) >= maxFindings {
			break
		}
	}
	return all, nil
}

// Step runs one statement on both systems and compares them.
func (r *Runner) Step(ctx context.Context, st Statement) ([]Finding, error) {
	info := classify(st.SQL)
	var fs []Finding
	report := func(format string, args ...any) {
		fs = append(fs, Finding{Source: r.Source, Line: st.Line, SQL: st.SQL, What: fmt.Sprintf(format, args...)})
	}
	sut := r.SUT.Name()

	if want := st.Expect.EngineOnlyError; want != "" || st.Expect.EngineOnly {
		if r.SkipEngineOnly {
			return nil, nil
		}
		res, err := r.SUT.Exec(ctx, st.SQL)
		if isFatal(err) {
			return fs, r.fatal(st, err)
		}
		switch {
		case st.Expect.EngineOnly:
			if d := checkEngineOnly(st.Expect, res, err); d != "" {
				report("  %s %s", sut, d)
			}
		case err == nil:
			report("  %s accepted the statement (%s); want SQLSTATE %s", sut, res.Tag, want)
		case sqlstate(err) != want:
			report("  %s failed with %s; want SQLSTATE %s", sut, err, want)
		}
	} else {
		refRes, refErr := r.Ref.Exec(ctx, st.refSQL())
		if isFatal(refErr) {
			return fs, r.fatal(st, refErr)
		}
		if r.Strict {
			if err := r.checkScript(st, refErr); err != nil {
				return fs, err
			}
		}
		sutRes, sutErr := r.SUT.Exec(ctx, r.sutSQL(st))
		if isFatal(sutErr) {
			return fs, r.fatal(st, sutErr)
		}
		ref := r.Ref.Name()
		switch {
		case r.early != nil:
			r.endEarly(st, info, refErr, sutErr, report)
		case refErr == nil && sutErr == nil:
			if refRes.Tag != sutRes.Tag {
				report("  command tag: %s %q, %s %q", ref, refRes.Tag, sut, sutRes.Tag)
			}
			if refRes.Columns != nil || sutRes.Columns != nil {
				ordered := info.ordered && !st.Expect.Unordered
				if d := compareColumns(refRes.Columns, sutRes.Columns); d != "" {
					report("  result columns differ from %s:\n%s", ref, d)
				}
				if d := compareRows(refRes.Rows, sutRes.Rows, ordered, ref, sut); d != "" {
					report("  result differs from %s:\n%s", ref, d)
				}
			}
		case refErr != nil && sutErr != nil:
			if sqlstate(refErr) != sqlstate(sutErr) {
				report("  both failed, with different SQLSTATEs:\n    %s: %s\n    %s: %s", ref, refErr, sut, sutErr)
			}
		case refErr != nil:
			report("  %s failed with %s\n  %s succeeded (%s)", ref, refErr, sut, sutRes.Tag)
		default:
			// An engine may report a materialized view's failure at the
			// statement that causes it instead of at COMMIT: accept that
			// when PostgreSQL's views fail the same way now, and judge
			// the block at its end.
			verr, err := r.Ref.ViewFailure(ctx)
			if err != nil {
				return fs, r.fatal(st, err)
			}
			if verr != nil && verr.SQLState == sqlstate(sutErr) {
				r.early = &earlyFailure{line: st.Line, sql: st.SQL, err: sutErr}
			} else {
				report("  %s succeeded (%s)\n  %s failed with %s", ref, refRes.Tag, sut, sutErr)
			}
		}
		if refErr == nil {
			r.track(info)
		}
	}

	switch info.kind {
	case kindBegin:
		r.inBlock = true
	case kindCommit, kindRollback:
		r.inBlock = false
	}
	if info.kind != kindQuery && !(r.ViewsBetweenTransactions && r.inBlock) {
		vfs, err := r.compareViews(ctx, st)
		for _, what := range vfs {
			report("%s", what)
		}
		if err != nil {
			return fs, r.fatal(st, err)
		}
	}
	return fs, nil
}

// endEarly compares a statement while the system under test's block is
// aborted by an early view failure. Until the block ends, the system
// under test must refuse every statement (25P02). At COMMIT, PostgreSQL
// evaluates the views of the block's final state: if they fail with the
// same SQLSTATE, both systems rolled the block back for the same reason;
// if they evaluate, the early failure rejected a transaction whose
// outcome was valid.
func (r *Runner) endEarly(st Statement, info stmtInfo, refErr, sutErr error, report func(string, ...any)) {
	e := r.early
	sut := r.SUT.Name()
	switch info.kind {
	case kindRollback:
		r.early = nil
	case kindCommit:
		r.early = nil
		switch {
		case refErr == nil:
			report("  %s failed the transaction at line %d (%s) with %s, but its final state is valid: %s commits it",
				sut, e.line, oneLine(e.sql), e.err, r.Ref.Name())
		case sqlstate(refErr) != sqlstate(e.err):
			report("  %s failed the transaction at line %d with %s; %s fails it at COMMIT with %s",
				sut, e.line, e.err, r.Ref.Name(), refErr)
		}
	default:
		if sqlstate(sutErr) != "25P02" {
			report("  %s's transaction was aborted at line %d, yet the statement gave %v, not 25P02", sut, e.line, sutErr)
		}
	}
}

// checkScript checks PostgreSQL's outcome against the script's error
// directive.
func (r *Runner) checkScript(st Statement, refErr error) error {
	want := st.Expect.Error
	switch {
	case want == "" && refErr != nil:
		return &ScriptError{r.Source, st.Line, fmt.Sprintf("PostgreSQL rejected the statement (%v); fix it, or mark it \"--! error %s\"", refErr, sqlstate(refErr))}
	case want != "" && refErr == nil:
		return &ScriptError{r.Source, st.Line, fmt.Sprintf("the statement is marked \"--! error %s\" but PostgreSQL accepted it", want)}
	case want != "" && sqlstate(refErr) != want:
		return &ScriptError{r.Source, st.Line, fmt.Sprintf("the statement is marked \"--! error %s\" but PostgreSQL failed with %v", want, refErr)}
	}
	return nil
}

// track records a view the reference created.
func (r *Runner) track(info stmtInfo) {
	if info.kind != kindCreateMatView && info.kind != kindCreateView {
		return
	}
	mat := info.kind == kindCreateMatView
	for i := range r.views {
		if r.views[i].name == info.name {
			r.views[i].materialized = mat
			return
		}
	}
	r.views = append(r.views, trackedView{name: info.name, materialized: mat})
}

// compareViews reads every tracked view through both observers and
// describes each disagreement that is new: one reported after an earlier
// statement and still the same is left out.
func (r *Runner) compareViews(ctx context.Context, st Statement) ([]string, error) {
	var out []string
	ref, sut := r.Ref.Name(), r.SUT.Name()
	if r.reported == nil {
		r.reported = map[string]string{}
	}
	for _, v := range r.views {
		before := len(out)
		q := "SELECT * FROM " + quoteIdent(v.name)
		refRes, refErr := r.Ref.Observe(ctx, q)
		if isFatal(refErr) {
			return out, refErr
		}
		sutRes, sutErr := r.SUT.Observe(ctx, q)
		if isFatal(sutErr) {
			return out, sutErr
		}
		kind := "view"
		if v.materialized {
			kind = "materialized view"
		}
		switch {
		case refErr != nil && sutErr != nil:
			if sqlstate(refErr) != sqlstate(sutErr) {
				out = append(out, fmt.Sprintf("  reading %s %s, both failed, with different SQLSTATEs:\n    %s: %s\n    %s: %s", kind, v.name, ref, refErr, sut, sutErr))
			}
		case refErr != nil:
			out = append(out, fmt.Sprintf("  reading %s %s: %s failed with %s; %s returned %d rows", kind, v.name, ref, refErr, sut, len(sutRes.Rows)))
		case sutErr != nil:
			out = append(out, fmt.Sprintf("  reading %s %s: %s returned %d rows; %s failed with %s", kind, v.name, ref, len(refRes.Rows), sut, sutErr))
		default:
			d := compareColumns(refRes.Columns, sutRes.Columns) + compareRows(refRes.Rows, sutRes.Rows, false, ref, sut)
			if d != "" {
				out = append(out, fmt.Sprintf("  %s %s differs from %s:\n%s", kind, v.name, ref, d))
			}
		}
		if len(out) == before {
			delete(r.reported, v.name)
			continue
		}
		if r.reported[v.name] == out[before] {
			out = out[:before] // unchanged since it was reported
			continue
		}
		r.reported[v.name] = out[before]
	}
	return out, nil
}

func (r *Runner) fatal(st Statement, err error) error {
	return fmt.Errorf("%s:%d: %s: %w", r.Source, st.Line, oneLine(st.SQL), err)
}

// isFatal reports whether err ends a run: anything but a statement's
// failure.
func isFatal(err error) bool {
	var e *Error
	return err != nil && !errors.As(err, &e)
}

// sqlstate returns a statement failure's SQLSTATE.
func sqlstate(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.SQLState
	}
	return ""
}
