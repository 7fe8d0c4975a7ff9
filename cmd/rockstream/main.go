// Command rockstream is RockStream's one binary: the embedded engine behind
// a psql-compatible SQL runner, a guided demo, and (as they are built) the
// server and cluster roles. docs/cli.md documents every command, flag and
// exit status.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
)

// Exit statuses shared by every command.
const (
	exitOK = 0
	// exitFailed: the command ran and something it checked or ran failed
	// (a SQL statement, the demo's verification).
	exitFailed = 1
	// exitUsage: the command could not run (bad flags or arguments,
	// unreadable input, storage that cannot be opened).
	exitUsage = 2
)

// usageError marks an error that kept a command from running at all.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line args and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errStatementsFailed):
		// Each failed statement was reported where it happened; print
		// only what else went wrong (closing the instance, say).
		if err != errStatementsFailed {
			fmt.Fprintf(stderr, "rockstream: %v\n", err)
		}
		return exitFailed
	}
	fmt.Fprintf(stderr, "rockstream: %v\n", err)
	var u usageError
	if errors.As(err, &u) {
		return exitUsage
	}
	return exitFailed
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "rockstream",
		Short: "RockStream, an incremental view maintenance database",
		Long: `RockStream is an incremental view maintenance database. Create tables and
materialized views over them in PostgreSQL's SQL; every INSERT, UPDATE and
DELETE flows through the views as a change, updating only the affected
state, so a view always equals what its query would return if run from
scratch, without running it again.

Start with "rockstream demo" to watch a view follow its table, then try your
own SQL with "rockstream sql", and serve psql and other PostgreSQL clients
with "rockstream start".`,
		Example: `  rockstream demo
  rockstream sql -c "CREATE TABLE t (a int)" -c "SELECT * FROM t"
  rockstream start --storage ./data
  rockstream version --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w\nSee '%s --help'.", err, cmd.CommandPath())}
	})
	root.AddCommand(newDemoCommand(), newSQLCommand(), newVersionCommand(), newDoctorCommand(), newCheckpointCommand(), newStartCommand(), newNexmarkCommand(), newInitCommand(), newLakeCommand(),
		newExplainCommand(), newAuditCommand(), newResourceCommand(), newSupportCommand(), newClusterCommand())
	root.Args = wrapArgs(root.Args)
	for _, c := range root.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	return root
}

// wrapArgs makes argument validation errors usage errors.
func wrapArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	if check == nil {
		return nil
	}
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{fmt.Errorf("%w\nSee '%s --help'.", err, cmd.CommandPath())}
		}
		return nil
	}
}
