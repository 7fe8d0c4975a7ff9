package main

import (
	"fmt"
	"log/slog"

	"github.com/rockstream/rockstream/internal/memgov"
)

// minMemoryLimit is the smallest --memory-limit: below it the server's
// own baseline would leave nothing to statements.
const minMemoryLimit = 32 << 20

// setMemoryLimit sets the process's memory limit from --memory-limit
// (0: the default, memgov.DefaultLimit).
func setMemoryLimit(log *slog.Logger, limit int64) error {
	if limit == 0 {
		limit = memgov.DefaultLimit()
	} else if limit < minMemoryLimit {
		return fmt.Errorf("--memory-limit must be at least 32MB")
	}
	memgov.Process().SetLimit(limit)
	if limit > 0 {
		log.Info("memory limit", "limit", memgov.FormatBytes(limit))
	}
	return nil
}
