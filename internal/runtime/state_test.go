package runtime

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/rockstream/rockstream/internal/state"
)

// stateKeys runs "state-keys VIEW": the number of committed keys under the
// view's operator-state prefix.
func stateKeys(t *testing.T, eng *Engine, d *datadriven.TestData) string {
	if len(d.CmdArgs) != 1 {
		d.Fatalf(t, "usage: state-keys VIEW")
	}
	eng.mu.RLock()
	defer eng.mu.RUnlock()
	o := eng.mu.cat.lookup(d.CmdArgs[0].Key)
	if o == nil {
		d.Fatalf(t, "no relation %q", d.CmdArgs[0].Key)
	}
	prefix := relPrefix(nsOpState, o.id)
	n := 0
	if err := eng.mu.store.Scan(prefix, state.PrefixEnd(prefix), func(_, _ []byte) bool {
		n++
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d\n", n)
}
