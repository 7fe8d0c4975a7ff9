package runtime

import (
	"errors"
	"fmt"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
)

// The iteration limit of recursive queries. A UNION ALL recursion over
// cyclic data never reaches a fixpoint, so every recursive query's loop
// stops after a number of iterations per maintenance step (or per ad-hoc
// evaluation) and fails the transaction with 54000. The limit is the
// session setting rockstream.max_recursion_iterations (default
// ops.DefaultMaxIterations); a materialized view keeps the value of the
// session that created it, recorded with its definition, so that how it
// is maintained never depends on who writes.

// recursionLimit returns the session's iteration limit.
func (s *Session) recursionLimit() int { return s.resolved().recursionLimit }

// limitRecursion sets the iteration limit of every recursive query in p;
// 0 leaves the default.
func limitRecursion(p plan.Node, n int) {
	// Down a chain of one-input nodes without Inputs' slices (a point
	// read's plan is one).
	for {
		switch x := p.(type) {
		case *plan.Filter:
			p = x.Input
			continue
		case *plan.Project:
			p = x.Input
			continue
		case *plan.Limit:
			p = x.Input
			continue
		case *plan.Scan:
			return
		}
		break
	}
	if r, ok := p.(*plan.Recursive); ok {
		r.MaxIterations = n
	}
	for _, in := range p.Inputs() {
		limitRecursion(in, n)
	}
}

// viewError names the materialized view whose maintenance hit its
// recursion limit.
func viewError(v *object, err error) error {
	var e *errs.Error
	if errors.As(err, &e) && e.Code == errs.ProgramLimitExceeded {
		c := *e
		c.Message = fmt.Sprintf("materialized view %q: %s", v.name, e.Message)
		return &c
	}
	return err
}
