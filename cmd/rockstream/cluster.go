package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/internal/admin"
)

// rockstream cluster: the cluster's state as a running server reports it
// in /health (docs/cluster.md#status).

func newClusterCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Show the workers and shards of a running server",
		Args:  cobra.NoArgs,
	}
	var server string
	var asJSON bool
	status := &cobra.Command{
		Use:   "status [--server URL] [--json]",
		Short: "Print a running server's role, frontier, workers and shards",
		Long: `status prints what a running server reports of its cluster state: its
role ("all" for a single process), its commit frontier (the last epoch
every shard has committed), one line per worker (its role, the bucket
ranges it owns, its state and the last epoch it applied) and one line per
shard (a contiguous range of buckets, its owner, its frontier and how far
it lags behind the most advanced shard). The same rows are in
rockstream_catalog.workers and rockstream_catalog.shards. --json prints
the answer of GET /health as it is.`,
		Example: `  rockstream cluster status
  rockstream cluster status --server http://10.0.0.5:6876`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := getHealth(cmd, server)
			if err != nil {
				return err
			}
			var h admin.Health
			return writeAnswer(cmd, body, asJSON, &h, func(w io.Writer) { printClusterStatus(w, &h) })
		},
	}
	answerFlags(status, &server, &asJSON)
	cmd.AddCommand(status)
	for _, c := range cmd.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	return cmd
}

// getHealth reads /health, whose status is 503 while the server is not
// ready: its body still says what is known.
func getHealth(cmd *cobra.Command, server string) ([]byte, error) {
	body, err := getServer(cmd, server, "/health")
	if err != nil && len(body) > 0 && json.Valid(body) {
		return body, nil
	}
	return body, err
}

func printClusterStatus(w io.Writer, h *admin.Health) {
	frontier := "unknown"
	if h.Frontier != nil {
		frontier = fmt.Sprint(*h.Frontier)
	}
	fmt.Fprintf(w, "role %s, status %s, frontier %s\n", h.Role, h.Status, frontier)
	if h.Problem != "" {
		fmt.Fprintf(w, "problem: %s\n", h.Problem)
	}
	fmt.Fprintln(w, "\nworkers")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "worker\trole\tbuckets\tcount\tstate\tapplied epoch\t")
	for _, wk := range h.Workers {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%d\t\n", wk.ID, wk.Role, strings.Join(wk.Buckets, ","), wk.BucketCount, wk.State, wk.AppliedEpoch)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nshards")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "buckets\towner\tfrontier\tlag epochs\tlag ms\t")
	for _, s := range h.Shards {
		fmt.Fprintf(tw, "%d-%d\t%d\t%d\t%d\t%d\t\n", s.FirstBucket, s.LastBucket, s.Owner, s.Frontier, s.LagEpochs, s.LagMs)
	}
	tw.Flush()
}
