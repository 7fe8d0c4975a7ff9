package oracle

import (
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/runtime"
)

// TestRandomViewsChunkedBackfill is TestRandomViews with every view's
// backfill stepped three input rows at a time, as a backfill over more
// rows than a chunk is: each view must still equal PostgreSQL's answer
// after every change.
func TestRandomViewsChunkedBackfill(t *testing.T) {
	defer runtime.SetBackfillProgress(3, time.Hour, time.Hour)()
	cases := *casesFlag
	defer func() { *casesFlag = cases }()
	*casesFlag = max(1, cases/4)
	checkRandomViews(t, func(workers int) (Engine, error) { return OpenRockStream(workers) })
}

// TestScriptsChunkedBackfill is TestScripts with every view's backfill
// stepped three input rows at a time.
func TestScriptsChunkedBackfill(t *testing.T) {
	restore := runtime.SetBackfillProgress(3, time.Hour, time.Hour)
	t.Cleanup(restore) // after the parallel subtests
	TestScripts(t)
}
