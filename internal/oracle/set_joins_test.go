package oracle

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestSetJoinsScriptWorkers runs the script of joins over tables with
// primary keys (whose arrangements are written without reads) on each of
// TestWorkers' worker counts, every step split between the workers:
// TestScripts runs it on the default.
func TestSetJoinsScriptWorkers(t *testing.T) {
	pgtest.Require(t)
	for _, n := range TestWorkers() {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			r, err := OpenRockStream(n)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			runScript(t, filepath.Join("testdata", "set_joins.sql"), r, false)
		})
	}
}
