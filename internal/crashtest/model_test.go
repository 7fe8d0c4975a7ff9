package crashtest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// slots is the number of concurrent writers. Writer w owns the rows whose
// w column is w, and the accounts keys w*keySpan up to w*keySpan+keysPerSlot.
const (
	slots       = 4
	keySpan     = 1000
	keysPerSlot = 48
)

// account is a row of accounts, less its key and owner.
type account struct {
	grp    *string
	amount *int64 // in cents: the column is numeric(12,2)
	qty    *int64
	txn    int64
}

// event is a row of events (a table without a key), less its owner.
type event struct {
	grp, tag *string
	val      *int64
	txn      int64
}

// label is a row of labels, less its key (w, grp).
type label struct {
	text *string
	txn  int64
}

// partition is everything one writer owns: its rows of each table and its
// ids in txn_log. A transaction works on a clone (see begin) and adopt
// installs the clone's state when it commits.
type partition struct {
	accounts map[int64]account
	events   []event
	labels   map[string]label
	// log holds the committed txn_log ids. It is shared with the clones
	// begin returns, which add to added instead.
	log   map[int64]bool
	added []int64
}

func newPartition() *partition {
	return &partition{accounts: map[int64]account{}, labels: map[string]label{}, log: map[int64]bool{}}
}

// begin returns a working copy of p for one transaction.
func (p *partition) begin() *partition {
	return &partition{
		accounts: maps.Clone(p.accounts),
		events:   slices.Clone(p.events),
		labels:   maps.Clone(p.labels),
		log:      p.log,
		added:    slices.Clone(p.added),
	}
}

// adopt makes the state of c, a copy from begin (or from begin of such a
// copy), p's state.
func (p *partition) adopt(c *partition) {
	p.accounts, p.events, p.labels = c.accounts, c.events, c.labels
	for _, id := range c.added {
		p.log[id] = true
	}
}

func (p *partition) hasLog(id int64) bool {
	return p.log[id] || slices.Contains(p.added, id)
}

// Operation kinds. Each is one SQL statement whose effect on the writer's
// partition the model computes exactly.
const (
	opAccInsert   = "acc_insert"   // INSERT INTO accounts VALUES (...), ...
	opAccUpsert   = "acc_upsert"   // INSERT ... ON CONFLICT (k) DO UPDATE
	opAccUpdate   = "acc_update"   // UPDATE accounts ... WHERE k = key
	opAccMove     = "acc_move"     // UPDATE accounts SET k = to WHERE k = key
	opAccBump     = "acc_bump"     // UPDATE accounts SET qty = qty + n WHERE grp = ...
	opAccDelete   = "acc_delete"   // DELETE FROM accounts WHERE k = key
	opAccPurge    = "acc_purge"    // DELETE FROM accounts WHERE qty < n
	opEvInsert    = "ev_insert"    // INSERT INTO events VALUES (...), ...
	opEvUpdate    = "ev_update"    // UPDATE events SET val = val + n WHERE tag = ...
	opEvDelete    = "ev_delete"    // DELETE FROM events WHERE tag = ...
	opEvForget    = "ev_forget"    // DELETE FROM events WHERE txn = id
	opLabelSet    = "label_set"    // INSERT INTO labels ... ON CONFLICT (w, grp) DO UPDATE
	opLabelDelete = "label_delete" // DELETE FROM labels WHERE grp = ...
	opLog         = "log"          // INSERT INTO txn_log VALUES (id, w)
)

// op is one statement of a transaction, as journalled.
type op struct {
	Kind     string       `json:"kind"`
	Key      int64        `json:"key,omitempty"`
	To       int64        `json:"to,omitempty"`
	Grp      *string      `json:"grp,omitempty"`
	Tag      *string      `json:"tag,omitempty"`
	Label    *string      `json:"label,omitempty"`
	Amount   *int64       `json:"amount,omitempty"`
	Qty      *int64       `json:"qty,omitempty"`
	N        int64        `json:"n,omitempty"`
	ID       int64        `json:"id,omitempty"`
	Accounts []accountRow `json:"accounts,omitempty"`
	Events   []eventRow   `json:"events,omitempty"`
}

type accountRow struct {
	Key    int64   `json:"key"`
	Grp    *string `json:"grp,omitempty"`
	Amount *int64  `json:"amount,omitempty"`
	Qty    *int64  `json:"qty,omitempty"`
}

type eventRow struct {
	Grp *string `json:"grp,omitempty"`
	Tag *string `json:"tag,omitempty"`
	Val *int64  `json:"val,omitempty"`
}

// errUnique is the model's primary-key violation; the engine must answer
// the same statement with SQLSTATE 23505.
var errUnique = errors.New("duplicate key")

// sql returns the statement of o for writer w in transaction txn.
func (o op) sql(w int, txn int64) string {
	switch o.Kind {
	case opAccInsert, opAccUpsert:
		var vals []string
		for _, r := range o.Accounts {
			vals = append(vals, fmt.Sprintf("(%d, %d, %s, %s, %s, %d)", r.Key, w, textLit(r.Grp), centsLit(r.Amount), intLit(r.Qty), txn))
		}
		s := "INSERT INTO accounts (k, w, grp, amount, qty, txn) VALUES " + strings.Join(vals, ", ")
		if o.Kind == opAccUpsert {
			s += " ON CONFLICT (k) DO UPDATE SET grp = EXCLUDED.grp, amount = EXCLUDED.amount, qty = EXCLUDED.qty, txn = EXCLUDED.txn"
		}
		return s
	case opAccUpdate:
		return fmt.Sprintf("UPDATE accounts SET amount = amount + %s, qty = %s, txn = %d WHERE k = %d", centsLit(o.Amount), intLit(o.Qty), txn, o.Key)
	case opAccMove:
		return fmt.Sprintf("UPDATE accounts SET k = %d, txn = %d WHERE k = %d", o.To, txn, o.Key)
	case opAccBump:
		return fmt.Sprintf("UPDATE accounts SET qty = qty + %d, txn = %d WHERE w = %d AND %s", o.N, txn, w, eqText("grp", o.Grp))
	case opAccDelete:
		return fmt.Sprintf("DELETE FROM accounts WHERE k = %d", o.Key)
	case opAccPurge:
		return fmt.Sprintf("DELETE FROM accounts WHERE w = %d AND qty < %d", w, o.N)
	case opEvInsert:
		var vals []string
		for _, r := range o.Events {
			vals = append(vals, fmt.Sprintf("(%d, %s, %s, %s, %d)", w, textLit(r.Grp), textLit(r.Tag), intLit(r.Val), txn))
		}
		return "INSERT INTO events (w, grp, tag, val, txn) VALUES " + strings.Join(vals, ", ")
	case opEvUpdate:
		return fmt.Sprintf("UPDATE events SET val = val + %d, txn = %d WHERE w = %d AND %s", o.N, txn, w, eqText("tag", o.Tag))
	case opEvDelete:
		return fmt.Sprintf("DELETE FROM events WHERE w = %d AND %s", w, eqText("tag", o.Tag))
	case opEvForget:
		return fmt.Sprintf("DELETE FROM events WHERE w = %d AND txn = %d", w, o.ID)
	case opLabelSet:
		return fmt.Sprintf("INSERT INTO labels (w, grp, label, txn) VALUES (%d, %s, %s, %d) ON CONFLICT (w, grp) DO UPDATE SET label = EXCLUDED.label, txn = EXCLUDED.txn", w, textLit(o.Grp), textLit(o.Label), txn)
	case opLabelDelete:
		return fmt.Sprintf("DELETE FROM labels WHERE w = %d AND grp = %s", w, textLit(o.Grp))
	case opLog:
		return fmt.Sprintf("INSERT INTO txn_log (id, w) VALUES (%d, %d)", o.ID, w)
	}
	panic("unknown op " + o.Kind)
}

// apply applies o, run by transaction txn, to p as the engine must; on
// errUnique p is unchanged (a statement is atomic).
func (p *partition) apply(o op, txn int64) error {
	switch o.Kind {
	case opAccInsert:
		seen := map[int64]bool{}
		for _, r := range o.Accounts {
			if _, ok := p.accounts[r.Key]; ok || seen[r.Key] {
				return errUnique
			}
			seen[r.Key] = true
		}
		for _, r := range o.Accounts {
			p.accounts[r.Key] = account{grp: r.Grp, amount: r.Amount, qty: r.Qty, txn: txn}
		}
	case opAccUpsert:
		for _, r := range o.Accounts {
			p.accounts[r.Key] = account{grp: r.Grp, amount: r.Amount, qty: r.Qty, txn: txn}
		}
	case opAccUpdate:
		if a, ok := p.accounts[o.Key]; ok {
			a.amount = addNullable(a.amount, o.Amount)
			a.qty = o.Qty
			a.txn = txn
			p.accounts[o.Key] = a
		}
	case opAccMove:
		a, ok := p.accounts[o.Key]
		if !ok {
			return nil
		}
		if _, taken := p.accounts[o.To]; taken && o.To != o.Key {
			return errUnique
		}
		delete(p.accounts, o.Key)
		a.txn = txn
		p.accounts[o.To] = a
	case opAccBump:
		n := o.N
		for k, a := range p.accounts {
			if sameText(a.grp, o.Grp) {
				a.qty = addNullable(a.qty, &n)
				a.txn = txn
				p.accounts[k] = a
			}
		}
	case opAccDelete:
		delete(p.accounts, o.Key)
	case opAccPurge:
		for k, a := range p.accounts {
			if a.qty != nil && *a.qty < o.N {
				delete(p.accounts, k)
			}
		}
	case opEvInsert:
		for _, r := range o.Events {
			p.events = append(p.events, event{grp: r.Grp, tag: r.Tag, val: r.Val, txn: txn})
		}
	case opEvUpdate:
		n := o.N
		for i, e := range p.events {
			if sameText(e.tag, o.Tag) {
				p.events[i].val = addNullable(e.val, &n)
				p.events[i].txn = txn
			}
		}
	case opEvDelete:
		p.events = slices.DeleteFunc(p.events, func(e event) bool { return sameText(e.tag, o.Tag) })
	case opEvForget:
		p.events = slices.DeleteFunc(p.events, func(e event) bool { return e.txn == o.ID })
	case opLabelSet:
		p.labels[*o.Grp] = label{text: o.Label, txn: txn}
	case opLabelDelete:
		delete(p.labels, *o.Grp)
	case opLog:
		if p.hasLog(o.ID) {
			return errUnique
		}
		p.added = append(p.added, o.ID)
	default:
		return fmt.Errorf("unknown op %q", o.Kind)
	}
	return nil
}

// sameText is the WHERE condition eqText writes: equality, or IS NULL for
// a NULL operand.
func sameText(v, want *string) bool {
	if want == nil {
		return v == nil
	}
	return v != nil && *v == *want
}

func addNullable(a, b *int64) *int64 {
	if a == nil || b == nil {
		return nil
	}
	s := *a + *b
	return &s
}

func eqText(col string, v *string) string {
	if v == nil {
		return col + " IS NULL"
	}
	return col + " = " + textLit(v)
}

func textLit(v *string) string {
	if v == nil {
		return "NULL"
	}
	return "'" + strings.ReplaceAll(*v, "'", "''") + "'"
}

func intLit(v *int64) string {
	if v == nil {
		return "NULL"
	}
	return strconv.FormatInt(*v, 10)
}

func centsLit(v *int64) string {
	if v == nil {
		return "NULL"
	}
	return centsText(*v)
}

// centsText formats cents as numeric(12,2) prints them.
func centsText(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// parseCents reads a numeric(12,2) value as printed.
func parseCents(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	whole, frac, ok := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if !ok || len(frac) != 2 {
		return 0, fmt.Errorf("numeric(12,2) value %q does not have two decimals", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, err
	}
	c := w*100 + f
	if neg {
		c = -c
	}
	return c, nil
}

// Rows are compared as text lines: the values as the engine prints them,
// with NULL spelled \N.

const null = `\N`

func cell(v *string) string {
	if v == nil {
		return null
	}
	return *v
}

func textOf(v int64) *string {
	s := strconv.FormatInt(v, 10)
	return &s
}

func nullableText(v *int64) *string {
	if v == nil {
		return nil
	}
	return textOf(*v)
}

func nullableCents(v *int64) *string {
	if v == nil {
		return nil
	}
	s := centsText(*v)
	return &s
}

// Each table is read with the owner column first and then the columns its
// line shows.
var tableReads = []struct {
	name, query string
	line        func(vals []*string) string
}{
	{"accounts", "SELECT w, k, grp, amount, qty, txn FROM accounts", func(v []*string) string {
		return fmt.Sprintf("accounts k=%s grp=%s amount=%s qty=%s txn=%s", cell(v[0]), cell(v[1]), cell(v[2]), cell(v[3]), cell(v[4]))
	}},
	{"events", "SELECT w, grp, tag, val, txn FROM events", func(v []*string) string {
		return fmt.Sprintf("events grp=%s tag=%s val=%s txn=%s", cell(v[0]), cell(v[1]), cell(v[2]), cell(v[3]))
	}},
	{"labels", "SELECT w, grp, label, txn FROM labels", func(v []*string) string {
		return fmt.Sprintf("labels grp=%s label=%s txn=%s", cell(v[0]), cell(v[1]), cell(v[2]))
	}},
	{"txn_log", "SELECT w, id FROM txn_log", func(v []*string) string {
		return fmt.Sprintf("txn_log id=%s", cell(v[0]))
	}},
}

// lines renders p as the sorted lines its rows would read as.
func (p *partition) lines() []string {
	var out []string
	acc, ev, lab, log := tableReads[0].line, tableReads[1].line, tableReads[2].line, tableReads[3].line
	for k, a := range p.accounts {
		out = append(out, acc([]*string{textOf(k), a.grp, nullableCents(a.amount), nullableText(a.qty), textOf(a.txn)}))
	}
	for _, e := range p.events {
		out = append(out, ev([]*string{e.grp, e.tag, nullableText(e.val), textOf(e.txn)}))
	}
	for g, l := range p.labels {
		out = append(out, lab([]*string{&g, l.text, textOf(l.txn)}))
	}
	for id := range p.log {
		out = append(out, log([]*string{textOf(id)}))
	}
	for _, id := range p.added {
		out = append(out, log([]*string{textOf(id)}))
	}
	slices.Sort(out)
	return out
}

// diffLines returns the lines of got and want that the other lacks (as
// multisets), marked "+" (only in got) and "-" (only in want), each
// annotated by note.
func diffLines(got, want []string, note func(line string) string) []string {
	count := map[string]int{}
	for _, l := range got {
		count[l]++
	}
	for _, l := range want {
		count[l]--
	}
	var out []string
	for _, l := range slices.Sorted(maps.Keys(count)) {
		for n := count[l]; n > 0; n-- {
			out = append(out, "+ "+l+note(l))
		}
		for n := count[l]; n < 0; n++ {
			out = append(out, "- "+l+note(l))
		}
	}
	return out
}
