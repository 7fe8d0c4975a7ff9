package main

import (
	"fmt"
	"log/slog"
	"os"
	"sort"

	"github.com/spf13/cobra"

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
		Long: `doctor opens a storage directory read-only in spirit (it commits nothing)
and checks it: every file's checksums as the store opens, every catalog
record's checksum and definition, that no change-log entry is newer than
the committed frontier, and that no stored data belongs to an object the
catalog does not know. With --deep it also reads every block of
every table file to check its checksum, and recomputes every materialized
view from its tables and compares.

It prints a report and exits 0 when the store is healthy, 1 when it found a
problem, and 2 when the store could not be opened at all (the message names
the damaged file). Stop the server using DIR first.`,
		Example: `  rockstream doctor --storage ./data
  rockstream doctor --storage ./data --deep`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return usageError{fmt.Errorf("--storage DIR is required")}
			}
			out := cmd.OutOrStdout()
			// --deep reads every block of every table file as the store
			// opens, so that damage in data no query happens to touch is
			// found too.
			st, err := storage.Open(storage.Options{Dir: dir, Logger: quietLogger(), VerifyChecksums: deep})
			if err != nil {
				return usageError{fmt.Errorf("cannot open %s: %w", dir, err)}
			}
			defer st.Close()
			if isLake, err := lake.IsLake(st); err != nil {
				return usageError{fmt.Errorf("cannot read %s: %w", dir, err)}
			} else if isLake {
				return doctorLake(out, dir, st)
			}
			rep, err := runtime.Check(st, deep)
			if err != nil {
				fmt.Fprintf(out, "storage %s\n  catalog: FAILED: %v\n", dir, err)
				return errDoctorProblems
			}
			fmt.Fprintf(out, "storage %s\n  files and checksums: ok\n  frontier: epoch %d\n", dir, rep.Frontier)
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
			if len(rep.Problems) == 0 {
				fmt.Fprintln(out, "healthy")
				return nil
			}
			for _, p := range rep.Problems {
				fmt.Fprintf(out, "  PROBLEM: %s\n", p)
			}
			fmt.Fprintf(out, "%d problem(s) found\n", len(rep.Problems))
			return errDoctorProblems
		},
	}
	cmd.Flags().StringVar(&dir, "storage", "", "the storage `DIR` to check")
	cmd.Flags().BoolVar(&deep, "deep", false, "also recompute every materialized view and compare")
	return cmd
}

// errDoctorProblems reports that doctor printed problems.
var errDoctorProblems = fmt.Errorf("%w", errStatementsFailed)

// quietLogger logs the storage's warnings and errors to standard error.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
