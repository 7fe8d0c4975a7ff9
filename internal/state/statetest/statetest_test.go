package statetest_test

import (
	"testing"

	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/state/statetest"
)

func TestMemoryBackends(t *testing.T) {
	for _, b := range statetest.MemoryBackends() {
		t.Run(b.Name, func(t *testing.T) { statetest.Run(t, b) })
	}
}

func TestMemoryModel(t *testing.T) {
	statetest.RunModel(t, func(statetest.T) (state.Store, func() error) {
		return state.NewMemory(), nil
	})
}
