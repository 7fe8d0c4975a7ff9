package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream"
)

// errStatementsFailed reports that the sql command ran every statement but
// at least one of them failed; the failures were already printed.
var errStatementsFailed = errors.New("one or more statements failed")

// sourceFlag is a -c or -f flag. Both append to one list, so scripts run
// in the order they appear on the command line, as in psql.
type sourceFlag struct {
	kind    string // "command" or "file"
	sources *[]sourceArg
}

type sourceArg struct {
	kind  string
	value string
}

func (f *sourceFlag) String() string { return "" }
func (f *sourceFlag) Type() string {
	if f.kind == "file" {
		return "file"
	}
	return "sql"
}
func (f *sourceFlag) Set(v string) error {
	*f.sources = append(*f.sources, sourceArg{kind: f.kind, value: v})
	return nil
}

func newSQLCommand() *cobra.Command {
	var (
		csv     bool
		store   storageFlags
		sources []sourceArg
	)
	cmd := &cobra.Command{
		Use:   "sql [--csv] [-c SQL]... [-f FILE]... [--storage DIR [--durability sync|relaxed] [--cache-size SIZE]]",
		Short: "Run SQL statements and print their results as psql does",
		Long: `Run SQL statements against an embedded RockStream instance and print
their results exactly as psql -q prints them for PostgreSQL.

Statements come from -c strings and -f files, in the order given on the
command line, or from standard input when neither is given. A string or
file may hold several statements separated by semicolons. As with psql,
the statements of a file run one by one, in order, in one session (BEGIN
... COMMIT groups statements into a transaction), while a -c string is
sent as one query: its statements run as one transaction, which the first
error rolls back, skipping the rest of the string. psql's backslash
meta-commands are not supported.

Results are printed in psql's aligned format, or as CSV with --csv (psql
--csv). Statements that return no rows print nothing. An error is printed
to standard error as psql prints it ("ERROR:  message", with a LINE
excerpt when the error points into the statement) and execution continues
with the next statement of the file, or the next -c string.

Without --storage the instance lives in memory and is gone when the
command ends. With --storage DIR its data is kept in DIR: the first run
creates it, later runs recover the tables and views from it (without
recomputing the views) and continue. Every transaction is durable when its
statement returns; --durability relaxed skips the fsync of each epoch, so a
crash may lose the last transactions — for benchmarks only. --cache-size
bounds the memory the storage keeps of DIR's data (default 256MB).

Exit status: 0 if every statement succeeded, 1 if any statement failed,
2 if the command could not run (bad flags, unreadable file, storage that
cannot be opened).`,
		Example: `  # One statement
  rockstream sql -c "SELECT 1 + 1 AS two"

  # A script file, then a query, as CSV
  rockstream sql --csv -f schema.sql -c "SELECT * FROM sales_by_store"

  # Statements from standard input, kept in ./data between runs
  rockstream sql --storage ./data < script.sql`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			scripts, err := loadScripts(sources, cmd.InOrStdin())
			if err != nil {
				return usageError{err}
			}
			format := writeAligned
			if csv {
				format = writeCSV
			}
			opts, err := store.options()
			if err != nil {
				return err
			}
			return runSQL(cmd.Context(), rockstream.Options(opts), scripts, format, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.VarP(&sourceFlag{kind: "command", sources: &sources}, "command", "c", "run the statements in `SQL` (repeatable)")
	f.VarP(&sourceFlag{kind: "file", sources: &sources}, "file", "f", "run the statements in `FILE`; - is standard input (repeatable)")
	f.BoolVar(&csv, "csv", false, "print results as CSV, as psql --csv does")
	store.register(f, "keep the instance's data in `DIR` (default: in memory)")
	return cmd
}

// loadScripts reads every source before any statement runs, so that a
// missing file stops the command before it changes anything.
func loadScripts(sources []sourceArg, stdin io.Reader) ([]script, error) {
	if len(sources) == 0 {
		sources = []sourceArg{{kind: "file", value: "-"}}
	}
	var scripts []script
	for _, s := range sources {
		switch {
		case s.kind == "command":
			scripts = append(scripts, script{text: s.value, command: true})
		case s.value == "-":
			b, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("reading standard input: %w", err)
			}
			scripts = append(scripts, script{text: string(b)})
		default:
			b, err := os.ReadFile(s.value)
			if err != nil {
				return nil, err
			}
			scripts = append(scripts, script{text: string(b)})
		}
	}
	return scripts, nil
}

// joinClose adds the error of close, if any, to *err. The error is left
// alone otherwise, so that sentinels such as errStatementsFailed survive.
func joinClose(err *error, close func() error) {
	if cerr := close(); cerr != nil {
		*err = errors.Join(*err, cerr)
	}
}

// runSQL runs the scripts in one session of an instance opened on storage,
// printing each result with format to stdout and each error to stderr.
func runSQL(ctx context.Context, opts rockstream.Options, scripts []script,
	format func(io.Writer, *rockstream.Result) error, stdout, stderr io.Writer) (err error) {
	db, err := rockstream.Open(opts)
	if err != nil {
		return usageError{fmt.Errorf("opening the instance: %w", err)}
	}
	defer joinClose(&err, db.Close)
	sess := db.Session()
	defer joinClose(&err, sess.Close)

	out := bufio.NewWriter(stdout)
	defer joinClose(&err, out.Flush)
	failed := false
	fail := func(e error, stmt string) error {
		failed = true
		// Keep stdout and stderr in statement order when both go to
		// one terminal or file.
		if err := out.Flush(); err != nil {
			return err
		}
		writeError(stderr, e, stmt)
		return nil
	}
	// Notices go to stderr as they come, as psql prints them.
	var noticeErr error
	sess.OnNotice(func(n rockstream.Notice) {
		if noticeErr = out.Flush(); noticeErr == nil {
			_, noticeErr = fmt.Fprintf(stderr, "%s:  %s\n", n.Severity, n.Message)
		}
	})
	print := func(res *rockstream.Result) error {
		if res.Columns == nil {
			return nil
		}
		return format(out, res)
	}
	for _, s := range scripts {
		if s.command {
			// psql sends a -c string to the server as one query: its
			// statements run as one transaction, up to the first error.
			var werr error
			err := sess.ExecEach(ctx, s.text, func(res *rockstream.Result) error {
				werr = print(res)
				return werr
			})
			if werr != nil {
				return werr
			}
			if err != nil {
				if err := fail(err, s.text); err != nil {
					return err
				}
			}
			continue
		}
		stmts, err := s.statements()
		if err != nil {
			if err := fail(err, s.text); err != nil {
				return err
			}
			continue
		}
		for _, stmt := range stmts {
			if err := ctx.Err(); err != nil {
				return err
			}
			res, err := sess.Exec(ctx, stmt)
			if err != nil {
				if err := fail(err, stmt); err != nil {
					return err
				}
				continue
			}
			if err := print(res); err != nil {
				return err
			}
		}
	}
	if noticeErr != nil {
		return noticeErr
	}
	if failed {
		return errStatementsFailed
	}
	return nil
}
