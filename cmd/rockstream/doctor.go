package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/lake"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/storage"
)

func newDoctorCommand() *cobra.Command {
	var dir string
	var deep bool
	cmd := &cobra.Command{
		Use:   "doctor --storage DIR [--deep]",
		Short: "Check a storage directory for damage and inconsistency",
		Long: `doctor checks a storage directory without changing it: it opens the store
read-only (the write-ahead log is replayed in memory, nothing is written,
renamed or deleted) and checks Pebble's files (the MANIFEST and the
write-ahead log with their checksums, every table present with its size),
every block of every table against its checksum, the order of keys in the
tables, the identity file's record of the durable epoch against what the
files hold, every catalog record's checksum and definition, that no
change-log entry is newer than the committed frontier, and that no stored
data belongs to an object the catalog does not know. With --deep it also
recomputes every materialized view from its tables and compares.

It prints a report and exits 0 when the store is healthy and 1 when it
found a problem (a "PROBLEM:" line each, naming the damaged file). A path
that does not hold a store exits 2. Stop the server using DIR first: a
store another process has open is refused.`,
		Example: `  rockstream doctor --storage ./data
  rockstream doctor --storage ./data --deep`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if dir == "" {
				return usageError{fmt.Errorf("--storage DIR is required")}
			}
			return runDoctor(cmd.OutOrStdout(), dir, deep)
		},
	}
	cmd.Flags().StringVar(&dir, "storage", "", "the storage `DIR` to check")
	cmd.Flags().BoolVar(&deep, "deep", false, "also recompute every materialized view and compare")
	return cmd
}

// runDoctor checks the store in dir and prints the report to out.
func runDoctor(out io.Writer, dir string, deep bool) (err error) {
	var problems []string
	problem := func(err error) {
		// Messages are one line each; Pebble's carry no stack traces
		// once the storage has summarized them, but keep to one line
		// whatever the source.
		problems = append(problems, strings.Join(strings.Fields(err.Error()), " "))
	}
	defer func() {
		if r := recover(); r != nil {
			problem(fmt.Errorf("internal error while checking: %v", r))
		}
		if err != nil {
			return
		}
		if len(problems) == 0 {
			fmt.Fprintln(out, "healthy")
			return
		}
		for _, p := range problems {
			fmt.Fprintf(out, "  PROBLEM: %s\n", p)
		}
		fmt.Fprintf(out, "%d problem(s) found\n", len(problems))
		err = errDoctorProblems
	}()
	st, err := storage.Open(storage.Options{Dir: dir, Logger: quietLogger(), ReadOnly: true, EpochKey: runtime.FrontierKey()})
	if err != nil && errs.CodeOf(err) == errs.UndefinedObject {
		return usageError{err}
	}
	fmt.Fprintf(out, "storage %s\n", dir)
	if err != nil {
		problem(err)
		return nil
	}
	defer st.Close()
	id := st.Identity()
	_, tables, bytes := st.Observed()
	isLake, lakeErr := lake.IsLake(st)
	// A lake's epoch is its revision (lake.EpochKey is the engine's
	// frontier key).
	durable := "epoch"
	if isLake {
		durable = "lake revision"
	}
	if id.ID == (storage.StoreID{}) {
		fmt.Fprintf(out, "  store: no %s (written by an earlier version; the next start creates it)\n", storage.IdentityFile)
	} else {
		fmt.Fprintf(out, "  store: %s, durable up to %s %d (%s)\n", id.ID, durable, id.Claim.Epoch, storage.IdentityFile)
	}
	fmt.Fprintf(out, "  files: ok (MANIFEST, write-ahead log, %d tables of %s, every block's checksum)\n", tables, humanBytes(bytes))
	if err := st.Verify(); err != nil {
		problem(err)
	} else {
		fmt.Fprintln(out, "  key order: ok")
	}
	if lakeErr != nil {
		problem(lakeErr)
		return nil
	} else if isLake {
		return checkLake(out, st, problem)
	}
	rep, err := runtime.Check(st, deep)
	if err != nil {
		problem(fmt.Errorf("catalog: %w", err))
		return nil
	}
	fmt.Fprintf(out, "  frontier: epoch %d\n", rep.Frontier)
	var kinds []string
	for k := range rep.Objects {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(out, "  %ss: %d\n", k, rep.Objects[k])
	}
	if deep && len(rep.Problems) == 0 {
		fmt.Fprintln(out, "  views equal their recomputation: ok")
	}
	for _, p := range rep.Problems {
		problem(errors.New(p))
	}
	return nil
}

// humanBytes prints a size for people.
func humanBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// errDoctorProblems reports that doctor printed problems.
var errDoctorProblems = fmt.Errorf("%w", errStatementsFailed)

// quietLogger logs the storage's warnings and errors to standard error.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
