package crashtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/errs"
)

// txnID returns the id of a writer's seq-th transaction of a run: unique
// across runs and writers, and increasing within a writer.
func txnID(run, w int, seq int64) int64 {
	if seq >= 10_000_000 {
		panic("too many transactions in one run")
	}
	return int64(run)*100_000_000 + int64(w)*10_000_000 + seq
}

// writer runs one slot's transactions, one at a time, on its own session.
type writer struct {
	w    int
	run  int
	rng  *rand.Rand
	db   *rockstream.DB
	sess *rockstream.Session
	j    *journal
	part *partition // the slot's committed rows, as the model has them
	seq  int64
}

// runWorkload runs one writer per slot and the DDL loop until ctx ends or
// one of them fails, and returns the first failure.
func runWorkload(ctx context.Context, db *rockstream.DB, j *journal, parts [slots]*partition, seed uint64, run int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
		cancel()
	}
	for w := range slots {
		wr := &writer{
			w: w, run: run, db: db, sess: db.Session(), j: j, part: parts[w],
			rng: rand.New(rand.NewPCG(seed, uint64(run)<<8|uint64(w))),
		}
		wg.Go(func() {
			defer wr.sess.Close()
			for ctx.Err() == nil {
				if err := wr.runTxn(); err != nil {
					fail(fmt.Errorf("writer %d: %w", w, err))
					return
				}
			}
		})
	}
	wg.Go(func() {
		if err := runDDL(ctx, db, rand.New(rand.NewPCG(seed, uint64(run)<<8|0xff))); err != nil {
			fail(fmt.Errorf("DDL: %w", err))
		}
	})
	wg.Wait()
	return first
}

// runDDL creates and drops the extra view at random intervals.
func runDDL(ctx context.Context, db *rockstream.DB, rng *rand.Rand) error {
	s := db.Session()
	defer s.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Duration(20+rng.IntN(250)) * time.Millisecond):
		}
		stmt := extraView.create
		if rng.IntN(2) == 0 {
			stmt = dropExtraView
		}
		if _, err := s.Exec(context.Background(), stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
}

// step is one statement of a planned transaction and what it must return.
type step struct {
	op   op
	want string // "" (success), "23505" or "25P02"
}

// runTxn plans, journals and runs one transaction, checks that every
// statement does what the model says, and journals the outcome.
func (wr *writer) runTxn() error {
	wr.seq++
	id := txnID(wr.run, wr.w, wr.seq)
	shape, steps, work := wr.plan(id)
	ops := make([]op, len(steps))
	for i, s := range steps {
		ops[i] = s.op
	}
	if err := wr.j.append(record{T: recIntent, ID: id, W: wr.w, Shape: shape, Ops: ops}, false); err != nil {
		return err
	}
	ctx := context.Background()
	exec := func(sql, want string) (*rockstream.Result, error) {
		res, err := wr.sess.Exec(ctx, sql)
		if got := sqlstate(err); got != want {
			return nil, fmt.Errorf("txn %d (%s): %s: got %s, want %s", id, shape, sql, describe(err), describeState(want))
		}
		return res, nil
	}
	committed := false
	switch shape {
	case shapeAuto, shapeAutoFail:
		if _, err := exec(steps[0].op.sql(wr.w, id), steps[0].want); err != nil {
			return err
		}
		committed = shape == shapeAuto
	default:
		if _, err := exec("BEGIN", ""); err != nil {
			return err
		}
		for _, s := range steps {
			if _, err := exec(s.op.sql(wr.w, id), s.want); err != nil {
				return err
			}
		}
		if shape == shapeBlock && wr.rng.IntN(4) == 0 {
			// A block reads its own writes.
			res, err := exec(fmt.Sprintf("SELECT count(*) FROM accounts WHERE w = %d", wr.w), "")
			if err != nil {
				return err
			}
			if got, want := cell(res.Rows[0][0]), strconv.Itoa(len(work.accounts)); got != want {
				return fmt.Errorf("txn %d: its block sees %s accounts of writer %d, the model %s", id, got, wr.w, want)
			}
		}
		end, tag := "COMMIT", "COMMIT"
		switch shape {
		case shapeRollback:
			end, tag = "ROLLBACK", "ROLLBACK"
		case shapeFail:
			tag = "ROLLBACK"
		}
		res, err := exec(end, "")
		if err != nil {
			return err
		}
		if res.Tag != tag {
			return fmt.Errorf("txn %d (%s): %s answered %q, want %q", id, shape, end, res.Tag, tag)
		}
		committed = shape == shapeBlock
	}
	if !committed {
		return wr.j.append(record{T: recNack, ID: id, W: wr.w}, false)
	}
	if err := wr.j.append(record{T: recAck, ID: id, W: wr.w, Epoch: wr.db.Epoch()}, true); err != nil {
		return err
	}
	wr.part.adopt(work)
	return nil
}

func sqlstate(err error) string {
	if err == nil {
		return ""
	}
	return errs.SQLState(err)
}

func describe(err error) string {
	if err == nil {
		return "success"
	}
	return fmt.Sprintf("error %s (%v)", errs.SQLState(err), err)
}

func describeState(s string) string {
	if s == "" {
		return "success"
	}
	return "error " + s
}

// plan chooses a transaction's shape and statements, and returns them with
// the writer's partition as it is after the statements the model applies.
func (wr *writer) plan(id int64) (string, []step, *partition) {
	work := wr.part.begin()
	var steps []step
	// add appends a statement expected to succeed; the generator only
	// makes such statements.
	add := func(o op) {
		if err := work.apply(o, id); err != nil {
			panic(fmt.Sprintf("generated statement %+v fails in the model: %v", o, err))
		}
		steps = append(steps, step{op: o})
	}
	logOp := op{Kind: opLog, ID: id}
	r := wr.rng.IntN(100)
	switch {
	case r < 45:
		add(wr.randomOp(work))
		return shapeAuto, steps, work
	case r < 52:
		add(logOp)
		return shapeAuto, steps, work
	case r < 57:
		if o, ok := wr.failingOp(work, id); ok {
			return shapeAutoFail, []step{{op: o, want: "23505"}}, work
		}
		add(wr.randomOp(work))
		return shapeAuto, steps, work
	case r < 85:
		n := 1 + wr.rng.IntN(5)
		at := wr.rng.IntN(n + 1)
		for i := range n + 1 {
			if i == at {
				add(logOp)
			} else {
				add(wr.randomOp(work))
			}
		}
		return shapeBlock, steps, work
	case r < 92:
		add(logOp)
		for range 1 + wr.rng.IntN(4) {
			add(wr.randomOp(work))
		}
		return shapeRollback, steps, work
	}
	add(logOp)
	for range wr.rng.IntN(3) {
		add(wr.randomOp(work))
	}
	o, ok := wr.failingOp(work, id)
	if !ok {
		o = logOp // the block's own id, a second time
	}
	steps = append(steps, step{op: o, want: "23505"})
	for range wr.rng.IntN(3) {
		steps = append(steps, step{op: wr.randomOp(work), want: "25P02"})
	}
	return shapeFail, steps, work
}

// failingOp returns a statement that violates a primary key in p's
// state, when p has a row to collide with.
func (wr *writer) failingOp(p *partition, id int64) (op, bool) {
	keys := wr.keys(p)
	if len(keys) == 0 {
		return op{}, false
	}
	existing := keys[wr.rng.IntN(len(keys))]
	if len(keys) >= 2 && wr.rng.IntN(3) == 0 {
		to := existing
		for to == existing {
			to = keys[wr.rng.IntN(len(keys))]
		}
		return op{Kind: opAccMove, Key: existing, To: to}, true
	}
	// A multi-row insert whose later row collides: none of it may apply.
	rows := []accountRow{wr.accountRow(existing)}
	if free := wr.freeKeys(p); len(free) > 0 {
		rows = append([]accountRow{wr.accountRow(free[wr.rng.IntN(len(free))])}, rows...)
	}
	return op{Kind: opAccInsert, Accounts: rows}, true
}

// randomOp returns a statement that succeeds in p's state.
func (wr *writer) randomOp(p *partition) op {
	rng := wr.rng
	keys, free := wr.keys(p), wr.freeKeys(p)
	r := rng.IntN(100)
	if len(p.events) > 80 && r >= 57 && r < 72 {
		r = 85 // too many events: forget some instead
	}
	switch {
	case r < 18 && len(free) > 0:
		var rows []accountRow
		for _, i := range rng.Perm(len(free))[:min(len(free), 1+rng.IntN(3))] {
			rows = append(rows, wr.accountRow(free[i]))
		}
		return op{Kind: opAccInsert, Accounts: rows}
	case r < 26:
		k1 := wr.slotKey(rng.IntN(keysPerSlot))
		rows := []accountRow{wr.accountRow(k1)}
		if k2 := wr.slotKey(rng.IntN(keysPerSlot)); k2 != k1 && rng.IntN(2) == 0 {
			rows = append(rows, wr.accountRow(k2))
		}
		return op{Kind: opAccUpsert, Accounts: rows}
	case r < 38:
		k := wr.slotKey(rng.IntN(keysPerSlot))
		if len(keys) > 0 && rng.IntN(5) > 0 {
			k = keys[rng.IntN(len(keys))]
		}
		delta := int64(rng.IntN(2001) - 1000)
		return op{Kind: opAccUpdate, Key: k, Amount: &delta, Qty: wr.randInt(100)}
	case r < 42 && len(keys) > 0 && len(free) > 0:
		return op{Kind: opAccMove, Key: keys[rng.IntN(len(keys))], To: free[rng.IntN(len(free))]}
	case r < 48:
		return op{Kind: opAccBump, Grp: wr.randText(groups), N: int64(rng.IntN(9) - 3)}
	case r < 54 && len(keys) > 0:
		return op{Kind: opAccDelete, Key: keys[rng.IntN(len(keys))]}
	case r < 57:
		return op{Kind: opAccPurge, N: int64(rng.IntN(9))}
	case r < 72:
		var rows []eventRow
		for range 1 + rng.IntN(4) {
			if len(rows) > 0 && rng.IntN(5) == 0 {
				rows = append(rows, rows[len(rows)-1]) // a duplicate row
				continue
			}
			rows = append(rows, eventRow{Grp: wr.randText(groups), Tag: wr.randText(tags), Val: wr.randInt(100)})
		}
		return op{Kind: opEvInsert, Events: rows}
	case r < 78:
		return op{Kind: opEvUpdate, Tag: wr.randText(tags), N: int64(rng.IntN(11) - 5)}
	case r < 83:
		return op{Kind: opEvDelete, Tag: wr.randText(tags)}
	case r < 88 && len(p.events) > 0:
		return op{Kind: opEvForget, ID: p.events[rng.IntN(len(p.events))].txn}
	case r < 96:
		g := groups[rng.IntN(len(groups))]
		return op{Kind: opLabelSet, Grp: &g, Label: wr.randText(labelNames)}
	}
	g := groups[rng.IntN(len(groups))]
	return op{Kind: opLabelDelete, Grp: &g}
}

var (
	groups     = []string{"a", "b", "c", "d", "e", "f"}
	tags       = []string{"x", "y", "z"}
	labelNames = []string{"L1", "L2", "L3"}
)

func (wr *writer) slotKey(i int) int64 { return int64(wr.w*keySpan + i) }

// keys returns p's account keys in order (so that the seed decides the
// choices, not map order).
func (wr *writer) keys(p *partition) []int64 {
	out := make([]int64, 0, len(p.accounts))
	for k := range p.accounts {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// freeKeys returns the slot's account keys p does not use.
func (wr *writer) freeKeys(p *partition) []int64 {
	var out []int64
	for i := range keysPerSlot {
		if _, ok := p.accounts[wr.slotKey(i)]; !ok {
			out = append(out, wr.slotKey(i))
		}
	}
	return out
}

func (wr *writer) accountRow(k int64) accountRow {
	r := accountRow{Key: k, Grp: wr.randText(groups), Qty: wr.randInt(100)}
	if wr.rng.IntN(10) > 0 {
		c := wr.rng.Int64N(220_000) - 20_000
		r.Amount = &c
	}
	return r
}

// randText returns one of choices, or NULL one time in eight.
func (wr *writer) randText(choices []string) *string {
	if wr.rng.IntN(8) == 0 {
		return nil
	}
	s := choices[wr.rng.IntN(len(choices))]
	return &s
}

// randInt returns an integer in [0, n), or NULL one time in ten.
func (wr *writer) randInt(n int) *int64 {
	if wr.rng.IntN(10) == 0 {
		return nil
	}
	v := int64(wr.rng.IntN(n))
	return &v
}

// readPartitions reads every table and splits its rows by owner, as lines
// and, when parts is not nil, into parts.
func readPartitions(ctx context.Context, db *rockstream.DB, parts *[slots]*partition) ([slots][]string, error) {
	var lines [slots][]string
	for _, tr := range tableReads {
		res, err := db.Query(ctx, tr.query)
		if err != nil {
			return lines, fmt.Errorf("%s: %w", tr.query, err)
		}
		for _, row := range res.Rows {
			w, err := strconv.Atoi(cell(row[0]))
			if err != nil || w < 0 || w >= slots {
				return lines, fmt.Errorf("%s holds a row of no writer: w=%s %s", tr.name, cell(row[0]), tr.line(row[1:]))
			}
			lines[w] = append(lines[w], tr.line(row[1:]))
			if parts != nil {
				if err := parseRow(parts[w], tr.name, row[1:]); err != nil {
					return lines, fmt.Errorf("%s: %w", tr.name, err)
				}
			}
		}
	}
	for w := range lines {
		slices.Sort(lines[w])
	}
	return lines, nil
}

// parseRow adds a row, as tableReads reads it, to p.
func parseRow(p *partition, table string, v []*string) error {
	var firstErr error
	num := func(s *string) int64 {
		n, err := strconv.ParseInt(cell(s), 10, 64)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return n
	}
	nullable := func(s *string) *int64 {
		if s == nil {
			return nil
		}
		n := num(s)
		return &n
	}
	switch table {
	case "accounts":
		a := account{grp: v[1], qty: nullable(v[3]), txn: num(v[4])}
		if v[2] != nil {
			c, err := parseCents(*v[2])
			if err != nil {
				return err
			}
			a.amount = &c
		}
		p.accounts[num(v[0])] = a
	case "events":
		p.events = append(p.events, event{grp: v[0], tag: v[1], val: nullable(v[2]), txn: num(v[3])})
	case "labels":
		if v[0] == nil {
			return errors.New("a label with a NULL key")
		}
		p.labels[*v[0]] = label{text: v[1], txn: num(v[2])}
	case "txn_log":
		p.log[num(v[0])] = true
	}
	return firstErr
}
