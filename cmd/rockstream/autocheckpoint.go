package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/rockstream/rockstream/internal/runtime"
)

// autoCheckpoints are `rockstream start`'s periodic online checkpoints:
// every interval, a checkpoint to the location, keeping the keep newest.
type autoCheckpoints struct {
	to       string
	interval time.Duration
	keep     int
}

func (a *autoCheckpoints) register(fs *pflag.FlagSet) {
	fs.StringVar(&a.to, "checkpoint-to", "", "take an online checkpoint to `URL` (file:///path or s3://bucket/prefix) every --checkpoint-interval")
	fs.DurationVar(&a.interval, "checkpoint-interval", time.Hour, "how often to checkpoint to --checkpoint-to")
	fs.IntVar(&a.keep, "checkpoint-keep", 0, "keep only the `N` newest checkpoints at --checkpoint-to (0 keeps all)")
}

func (a *autoCheckpoints) check(storageDir string) error {
	switch {
	case a.to == "":
		return nil
	case storageDir == "":
		return fmt.Errorf("--checkpoint-to needs --storage DIR: an instance in memory has nothing to checkpoint")
	case a.interval <= 0:
		return fmt.Errorf("--checkpoint-interval must be positive")
	case a.keep < 0:
		return fmt.Errorf("--checkpoint-keep must be at least 0")
	}
	return nil
}

// start takes a checkpoint every interval until the returned function is
// called; that function cancels a checkpoint under way and waits for it.
// Each checkpoint is logged and audited (role "server"); a failed one is
// retried at the next interval.
func (a *autoCheckpoints) start(log *slog.Logger, eng *runtime.Engine) (stop func()) {
	if a.to == "" {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(a.interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			began := time.Now()
			r, err := eng.Checkpoint(ctx, a.to, a.keep, nil)
			if ctx.Err() != nil {
				return // stopping: the interrupted checkpoint is no failure
			}
			eng.AuditCheckpoint("server", a.to, r, err)
			if err != nil {
				log.Warn("checkpoint failed", "to", a.to, "err", err, "next_in", a.interval.String())
				continue
			}
			attrs := []any{"to", a.to, "id", r.Manifest.ID, "epoch", r.Manifest.Epoch,
				"uploaded_files", r.Manifest.Uploaded.Files, "uploaded_bytes", r.Manifest.Uploaded.Bytes,
				"duration", time.Since(began).Round(time.Millisecond).String()}
			if r.Pruned != nil {
				attrs = append(attrs, "deleted_checkpoints", len(r.Pruned.Deleted))
			}
			log.Info("checkpoint created", attrs...)
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}
