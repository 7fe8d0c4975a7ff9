package oracle

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestUnstoredScriptWorkers runs the script of unmaterialized tables on
// each of TestWorkers' worker counts (TestScripts runs it on the
// default): every view over them must equal PostgreSQL's on every count.
func TestUnstoredScriptWorkers(t *testing.T) {
	pgtest.Require(t)
	for _, n := range TestWorkers() {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			r, err := OpenRockStream(n)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			runScript(t, filepath.Join("testdata", "unstored.sql"), r, false)
		})
	}
}
