package runtime

import (
	"encoding/binary"
	"fmt"

	"github.com/rockstream/rockstream/internal/state"
)

// Report is what Check found in a store.
type Report struct {
	// Frontier is the last committed epoch.
	Frontier uint64
	// Objects counts catalog objects by kind ("table", "view",
	// "materialized view").
	Objects map[string]int
	// Problems lists every inconsistency found; empty means healthy.
	Problems []string
	// Layout is the layout version the store holds (layout.go; 0: an
	// empty store). A store of an older layout is checked as its upgrade
	// would leave it, upgraded in memory only: Check never writes.
	Layout uint64
}

// Check opens the catalog in store and checks that the store is
// consistent: every catalog record has a valid checksum and replays; no
// change-log entry is newer than the frontier; no stored rows, operator
// state, change log or index entry belongs to an object the catalog does
// not have. With deep, it also checks that every materialized view equals
// its query recomputed from the tables and every index holds exactly its
// relation's rows. A store that cannot be opened at all is an
// error; problems found in one that can are in the report.
func Check(store Store, deep bool) (*Report, error) {
	layout, err := checkLayout(store)
	if err != nil {
		return nil, err
	}
	if layout > 0 && layout < storeLayout {
		store = &upgradeScratch{Overlay: state.NewOverlay(store), parent: store}
	}
	e, err := Open(store, Options{})
	if err != nil {
		return nil, err
	}
	defer func() { close(e.stop); <-e.stopped }()
	e.mu.RLock()
	defer e.mu.RUnlock()
	rep := &Report{Frontier: e.mu.epoch, Objects: map[string]int{}, Layout: layout}
	ids := map[uint64]*object{}
	for _, o := range e.mu.cat.byName {
		rep.Objects[o.kindName()]++
		ids[o.id] = o
	}
	for _, ns := range []byte{nsTableRows, nsViewRows, nsOpState, nsChangeLog} {
		if err := checkNamespace(e.mu.store, ns, ids, e.mu.epoch, rep); err != nil {
			return nil, err
		}
	}
	if err := checkNamespace(e.mu.store, nsIndex, indexObjects(e.mu.cat), e.mu.epoch, rep); err != nil {
		return nil, err
	}
	if deep && len(rep.Problems) == 0 {
		if err := e.verifyViewsLocked(); err != nil {
			rep.Problems = append(rep.Problems, err.Error())
		}
	}
	return rep, nil
}

var nsNames = map[byte]string{
	nsTableRows: "table rows",
	nsViewRows:  "view contents",
	nsOpState:   "operator state",
	nsChangeLog: "change log",
	nsIndex:     "index entries",
}

// checkNamespace checks that every key of namespace ns belongs to a
// catalog object (and, for change logs, is not past the frontier). It
// visits each object's key range once, skipping from one object to the
// next.
func checkNamespace(r state.Reader, ns byte, ids map[uint64]*object, frontier uint64, rep *Report) error {
	lo := []byte{ns}
	hi := []byte{ns + 1}
	for {
		var key []byte
		if err := r.Scan(lo, hi, func(k, _ []byte) bool {
			key = append([]byte(nil), k...)
			return false
		}); err != nil {
			return err
		}
		if key == nil {
			return nil
		}
		id, n := binary.Uvarint(key[1:])
		if n <= 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: key %x has no object id", nsNames[ns], key))
			lo = state.PrefixEnd(key)
			continue
		}
		o := ids[id]
		prefix := key[:1+n]
		switch {
		case o == nil:
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: data of object id %d, which the catalog does not have", nsNames[ns], id))
		case ns == nsChangeLog:
			if err := checkChangeLog(r, o, frontier, rep); err != nil {
				return err
			}
		}
		lo = state.PrefixEnd(prefix)
		if lo == nil {
			return nil
		}
	}
}

func checkChangeLog(r state.Reader, o *object, frontier uint64, rep *Report) error {
	ep, ok, err := lastChange(r, o.id)
	if err != nil {
		return err
	}
	if ok && ep > frontier {
		rep.Problems = append(rep.Problems, fmt.Sprintf("change log of %s %s has epoch %d, past the frontier %d", o.kindName(), o.name, ep, frontier))
	}
	return nil
}

// upgradeScratch is a store whose commits stay in memory, over a store
// Check must not write: the upgrade of an older layout is made in it.
type upgradeScratch struct {
	*state.Overlay
	parent Store
}

func (*upgradeScratch) Commit() error  { return nil }
func (u *upgradeScratch) Abort()       { u.Discard() }
func (u *upgradeScratch) Close() error { return u.parent.Close() }
