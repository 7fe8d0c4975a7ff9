package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/internal/nexmark"
)

// nexmarkOptions are the flags of the nexmark command.
type nexmarkOptions struct {
	events   int
	batch    int
	seed     uint64
	rate     int
	lateness time.Duration
	queries  []string
	postgres bool
	noSchema bool
}

func newNexmarkCommand() *cobra.Command {
	var o nexmarkOptions
	cmd := &cobra.Command{
		Use:   "nexmark [--events N] [--batch N] [--queries q0,q5,...] [--postgres] [--no-schema]",
		Short: "Print a Nexmark benchmark script: tables, views and a stream of events",
		Long: `Print, as a SQL script on standard output, the Nexmark streaming benchmark:
the person, auction and bid tables (declaring event time and lateness), the
side input table of q13, a materialized view for each chosen query, and a
generated stream of events as transactions of --batch events.

Pipe it into "rockstream sql" or psql connected to RockStream. With
--postgres the script is for PostgreSQL instead: plain tables, and each
query as a plain view with its time windows written with date_bin and
generate_series, so that the two systems' views can be compared. q12 is
never included (RockStream rejects processing time). The queries and the
event model are described in docs/nexmark.md.

The stream is determined by --seed, --rate (events per second of event
time) and --events; --no-schema prints only the events, to continue a
stream in an instance that has the tables.`,
		Example: `  rockstream nexmark --events 10000 --queries q5,q7 > nexmark.sql
  rockstream sql -f nexmark.sql -c "SELECT * FROM q7 ORDER BY date_time LIMIT 5"
  rockstream nexmark --events 10000 --queries q5,q7 --postgres | psql -q`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			w := bufio.NewWriter(cmd.OutOrStdout())
			if err := writeNexmark(w, o); err != nil {
				return err
			}
			return w.Flush()
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.events, "events", 10000, "number of events")
	f.IntVar(&o.batch, "batch", 1000, "events per transaction")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the stream")
	f.IntVar(&o.rate, "rate", 10000, "events per second of event time")
	f.DurationVar(&o.lateness, "lateness", 10*time.Second, "lateness of the event tables (0: no event time declared)")
	f.StringSliceVar(&o.queries, "queries", nil, "queries to create views for (default: every supported one)")
	f.BoolVar(&o.postgres, "postgres", false, "write the script for PostgreSQL")
	f.BoolVar(&o.noSchema, "no-schema", false, "print only the events")
	return cmd
}

// writeNexmark writes the script o describes to w.
func writeNexmark(w io.Writer, o nexmarkOptions) error {
	if o.events < 0 || o.batch <= 0 || o.rate <= 0 || o.lateness < 0 {
		return usageError{fmt.Errorf("--events, --lateness must not be negative; --batch and --rate must be positive")}
	}
	queries, err := nexmarkQueries(o.queries)
	if err != nil {
		return usageError{err}
	}
	if !o.noSchema {
		lateness := o.lateness
		if o.postgres {
			lateness = 0
		}
		for _, t := range nexmark.Tables {
			fmt.Fprintf(w, "%s;\n", t.CreateTable(lateness, !o.postgres))
		}
		fmt.Fprintf(w, "%s;\n%s;\n", nexmark.SideInputTable, nexmark.SideInputRows())
		for _, q := range queries {
			create := q.CreateView()
			if o.postgres {
				create = q.CreateViewPostgres()
			}
			fmt.Fprintf(w, "\n-- %s: %s\n%s;\n", q.Name, q.Title, create)
		}
	}
	gen := nexmark.NewGenerator(nexmark.Config{Seed: o.seed, EventsPerSecond: o.rate})
	for sent := 0; sent < o.events; {
		n := min(o.batch, o.events-sent)
		fmt.Fprint(w, "\nBEGIN;\n")
		for _, ins := range nexmark.Inserts(gen.NextN(n)) {
			fmt.Fprintf(w, "%s;\n", ins)
		}
		if _, err := fmt.Fprint(w, "COMMIT;\n"); err != nil {
			return err
		}
		sent += n
	}
	return nil
}

// nexmarkQueries returns the supported queries named, all of them when
// names is empty.
func nexmarkQueries(names []string) ([]nexmark.Query, error) {
	var out []nexmark.Query
	if len(names) == 0 {
		for _, q := range nexmark.Queries() {
			if q.Unsupported == "" {
				out = append(out, q)
			}
		}
		return out, nil
	}
	for _, name := range names {
		q, ok := nexmark.Lookup(strings.ToLower(strings.TrimSpace(name)))
		switch {
		case !ok:
			return nil, fmt.Errorf("unknown query %q: the queries are q0 to q22", name)
		case q.Unsupported != "":
			return nil, fmt.Errorf("%s is not supported: %s", q.Name, q.Unsupported)
		}
		out = append(out, q)
	}
	return out, nil
}
