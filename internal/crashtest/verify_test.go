package crashtest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream"
)

// txnInfo is what the journal says of one transaction.
type txnInfo struct {
	id      int64
	w       int
	shape   string
	ops     []op
	outcome string // recAck, recNack, or "" while in doubt
}

// verifier checks a store against the journal, one run at a time. It
// keeps each writer's partition as of the end of the last run checked,
// with the transaction then in doubt resolved the way the store showed.
type verifier struct {
	root   string
	offset int64 // journal bytes already checked
	parts  [slots]*partition
	txns   map[int64]*txnInfo
	ready  bool // the schema has been complete once
	// present is how many relations of the schema the last check found.
	present int
	epoch   uint64 // the epoch the last check recovered
	maxAck  uint64 // the largest epoch reported with an acknowledgement
	// history holds each materialized view of the schema as the last
	// check read it, at epoch historyEpoch: later, AS OF that epoch must
	// read the same, which checks the recovered change logs.
	history      map[string][]string
	historyEpoch uint64
	stats        stats
}

type stats struct {
	acked, nacked           int
	doubtApplied, doubtLost int
	notReady                int // checks that found the schema incomplete
}

func newVerifier(root string) *verifier {
	v := &verifier{root: root, txns: map[int64]*txnInfo{}}
	for w := range v.parts {
		v.parts[w] = newPartition()
	}
	return v
}

func (v *verifier) dbDir() string       { return filepath.Join(v.root, "db") }
func (v *verifier) journalPath() string { return filepath.Join(v.root, "journal") }

// check opens the store the way a restarted server does and checks it
// against everything journalled since the last check.
func (v *verifier) check(ctx context.Context) error {
	db, err := rockstream.Open(rockstream.Options{Storage: v.dbDir(), CacheBytes: 8 << 20})
	if err != nil {
		return fmt.Errorf("opening the store after the kill: %w", err)
	}
	err = v.checkDB(ctx, db)
	if cerr := db.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("closing the store: %w", cerr))
	}
	return err
}

// checkDB checks an open store against the journal.
func (v *verifier) checkDB(ctx context.Context, db *rockstream.DB) error {
	recs, offset, err := readJournal(v.journalPath(), v.offset)
	if err != nil {
		return err
	}
	var problems []string
	problem := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	// What the run did, writer by writer.
	var bySlot [slots][]*txnInfo
	intents := 0
	for _, r := range recs {
		switch r.T {
		case recOpen:
			if r.Epoch < v.epoch {
				problem("epoch went backwards: the writer process recovered epoch %d, the check before it %d", r.Epoch, v.epoch)
			}
		case recReady:
			v.ready = true
		case recIntent:
			t := &txnInfo{id: r.ID, w: r.W, shape: r.Shape, ops: r.Ops}
			v.txns[r.ID] = t
			bySlot[r.W] = append(bySlot[r.W], t)
			intents++
		case recAck, recNack:
			t := v.txns[r.ID]
			if t == nil {
				return fmt.Errorf("journal: %s of txn %d, which has no intent", r.T, r.ID)
			}
			t.outcome = r.T
			if r.T == recAck {
				v.maxAck = max(v.maxAck, r.Epoch)
			}
		}
	}

	epoch := db.Epoch()
	if epoch < v.epoch {
		problem("epoch went backwards: recovered epoch %d, the previous recovery had %d", epoch, v.epoch)
	}
	if epoch < v.maxAck {
		problem("epoch went backwards: recovered epoch %d, but a transaction was acknowledged when the epoch was %d", epoch, v.maxAck)
	}

	n, err := presentSchema(ctx, db)
	v.present = n
	if err != nil {
		problem("the schema is not a prefix of the DDL run: %v", err)
	}
	if n < len(schema) {
		if v.ready || intents > 0 {
			problem("the schema lost DDL that was committed: only %d of %d relations exist (next missing: %s)", n, len(schema), schema[n].name)
		}
		if problems == nil {
			v.stats.notReady++
			v.epoch, v.offset = epoch, offset
			return nil
		}
		return errors.New(strings.Join(problems, "\n"))
	}

	// Every writer's rows against the model.
	got, err := readPartitions(ctx, db, nil)
	if err != nil {
		return err
	}
	next := v.parts
	for w := range slots {
		work, doubt, err := v.replay(w, bySlot[w])
		if err != nil {
			problem("%v", err)
			continue
		}
		without := work.lines()
		if doubt == nil {
			if d := diffLines(got[w], without, v.note); d != nil {
				problem("writer %d: the store differs from the acknowledged transactions (+ in the store only, - missing from it):\n%s", w, clip(d))
			}
			next[w] = work
			continue
		}
		with := work.begin()
		for _, o := range doubt.ops {
			if err := with.apply(o, doubt.id); err != nil {
				problem("writer %d: txn %d (in doubt): the model rejects %s: %v", w, doubt.id, o.sql(w, doubt.id), err)
			}
		}
		withLines := with.lines()
		switch {
		case slices.Equal(got[w], without):
			next[w] = work
			if !slices.Equal(without, withLines) {
				v.stats.doubtLost++
			}
		case slices.Equal(got[w], withLines):
			next[w] = with
			v.stats.doubtApplied++
		default:
			problem("writer %d: the store holds part of txn %d (in doubt at the kill, %s) or differs otherwise.\nAgainst the state without it:\n%s\nAgainst the state with it:\n%s",
				w, doubt.id, doubt.shape, clip(diffLines(got[w], without, v.note)), clip(diffLines(got[w], withLines, v.note)))
		}
	}

	// Every view against its recomputation.
	if err := db.VerifyViews(); err != nil {
		problem("VerifyViews: %v", err)
	}
	views := []relation{}
	for _, r := range schema {
		if r.query != "" {
			views = append(views, r)
		}
	}
	if ok, err := exists(ctx, db, extraView.name); err != nil {
		problem("%v", err)
	} else if ok {
		views = append(views, extraView)
	}
	history := map[string][]string{}
	for _, r := range views {
		stored, err := queryLines(ctx, db, "SELECT * FROM "+r.name)
		if err != nil {
			problem("%v", err)
			continue
		}
		if r.name != extraView.name {
			history[r.name] = stored
		}
		if then, ok := v.history[r.name]; ok {
			past, err := queryLines(ctx, db, fmt.Sprintf("SELECT * FROM %s AS OF EPOCH %d", r.name, v.historyEpoch))
			if err != nil {
				problem("%v", err)
			} else if d := diffLines(past, then, func(string) string { return "" }); d != nil {
				problem("materialized view %s read AS OF EPOCH %d differs from what it held at that epoch (+ read now only, - held then only):\n%s", r.name, v.historyEpoch, clip(d))
			}
		}
		adhoc, err := queryLines(ctx, db, r.query)
		if err != nil {
			problem("%v", err)
			continue
		}
		if d := diffLines(stored, adhoc, func(string) string { return "" }); d != nil {
			problem("materialized view %s differs from its query over the recovered tables (+ in the view only, - in the query only):\n%s", r.name, clip(d))
		}
	}

	if problems == nil {
		if err := retractAll(ctx, db, views); err != nil {
			problem("%v", err)
		}
	}

	if problems != nil {
		return errors.New(strings.Join(problems, "\n"))
	}
	for w := range slots {
		v.parts[w].adopt(next[w])
		for _, t := range bySlot[w] {
			switch t.outcome {
			case recAck:
				v.stats.acked++
			case recNack:
				v.stats.nacked++
			}
		}
	}
	v.epoch, v.offset = epoch, offset
	v.history, v.historyEpoch = history, epoch
	return nil
}

// retractAll deletes every row of every table in a transaction block and
// checks that every view is then empty, and rolls the block back. Each
// operator must retract exactly what it holds, so recovered operator state
// (arrangements, aggregate state) that disagrees with the tables shows
// here even when the views' contents agree.
func retractAll(ctx context.Context, db *rockstream.DB, views []relation) error {
	s := db.Session()
	defer s.Close()
	if _, err := s.Exec(ctx, "BEGIN"); err != nil {
		return err
	}
	defer s.Exec(ctx, "ROLLBACK")
	for _, tr := range tableReads {
		if _, err := s.Exec(ctx, "DELETE FROM "+tr.name); err != nil {
			return fmt.Errorf("deleting every row of %s (in a block rolled back afterwards): %w", tr.name, err)
		}
	}
	for _, r := range views {
		res, err := s.Exec(ctx, "SELECT * FROM "+r.name)
		if err != nil {
			return fmt.Errorf("reading %s after deleting every row (in a block rolled back afterwards): %w", r.name, err)
		}
		if len(res.Rows) > 0 {
			return fmt.Errorf("materialized view %s keeps %d rows after every row of every table is deleted (in a block rolled back afterwards); its recovered state disagrees with the tables", r.name, len(res.Rows))
		}
	}
	return nil
}

// replay returns writer w's partition with its acknowledged transactions
// of this run applied, and the transaction the run left in doubt that
// could have committed, if any.
func (v *verifier) replay(w int, txns []*txnInfo) (*partition, *txnInfo, error) {
	work := v.parts[w].begin()
	var doubt *txnInfo
	for i, t := range txns {
		switch {
		case t.outcome == recAck:
			if doubt != nil {
				return nil, nil, fmt.Errorf("journal: writer %d acknowledged txn %d after txn %d, which has no outcome", w, t.id, doubt.id)
			}
			if !committable(t.shape) {
				return nil, nil, fmt.Errorf("journal: txn %d of shape %s was acknowledged", t.id, t.shape)
			}
			for _, o := range t.ops {
				if err := work.apply(o, t.id); err != nil {
					return nil, nil, fmt.Errorf("writer %d: the model rejects %s of acknowledged txn %d: %v", w, o.sql(w, t.id), t.id, err)
				}
			}
		case t.outcome == recNack:
		case i != len(txns)-1:
			return nil, nil, fmt.Errorf("journal: writer %d started txn %d after txn %d, which has no outcome", w, txns[i+1].id, t.id)
		case committable(t.shape):
			doubt = t
		}
	}
	return work, doubt, nil
}

var txnInLine = regexp.MustCompile(`(?:txn|id)=(\d+)`)

// note describes the transaction a row line carries.
func (v *verifier) note(line string) string {
	m := txnInLine.FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	t := v.txns[id]
	if t == nil {
		return fmt.Sprintf("   <- txn %d: never journalled", id)
	}
	what := "in doubt"
	switch {
	case t.outcome == recAck:
		what = "acknowledged"
	case t.outcome == recNack || !committable(t.shape):
		what = "never committed"
	}
	return fmt.Sprintf("   <- txn %d: %s, %s", id, t.shape, what)
}

// clip keeps a diff readable.
func clip(lines []string) string {
	const most = 60
	if len(lines) > most {
		lines = append(lines[:most:most], fmt.Sprintf("... and %d more lines", len(lines)-most))
	}
	return "  " + strings.Join(lines, "\n  ")
}

// queryLines runs a query and returns its rows as sorted lines.
func queryLines(ctx context.Context, db *rockstream.DB, sql string) ([]string, error) {
	res, err := db.Query(ctx, sql)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sql, err)
	}
	out := make([]string, len(res.Rows))
	for i, row := range res.Rows {
		cells := make([]string, len(row))
		for j, c := range row {
			cells[j] = cell(c)
		}
		out[i] = strings.Join(cells, "|")
	}
	slices.Sort(out)
	return out, nil
}
