package kafka

import (
	"testing"

	"github.com/rockstream/rockstream/internal/pgtest"
)

func TestMain(m *testing.M) {
	// The crash test runs this binary again as the engine process it kills.
	runCrashChildIfAsked()
	pgtest.Main(m)
}
