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
	var server, controlAddr string
	var asJSON bool
	status := &cobra.Command{
		Use:   "status [--server URL | --control ADDR] [--json]",
		Short: "Print a running server's role, frontier, workers and shards",
		Long: `status prints what a running server reports of its cluster state in
GET /health: its role ("all" for a single process), its commit frontier
(the last epoch every shard has committed), one line per worker (its
role, the bucket ranges it owns, its state and the last epoch it applied)
and one line per shard (a contiguous range of buckets, its owner, its
frontier and how far it lags behind the most advanced shard). The same
rows are in rockstream_catalog.workers and rockstream_catalog.shards.
--json prints the answer of GET /health as it is.

--server may name a control process (rockstream start --role control) as
well: its /health has the role "control", the committed epoch as the
frontier, the cluster's workers by node ID and the assignment's bucket
ranges, each lagging behind the committed epoch.

With --control ADDR it asks a control process for GET /cluster/status
instead: the cluster's leader, assignment revision, frontier and
checkpoint from etcd, one line per worker (membership, endpoint, state,
buckets, applied epoch and lag behind the frontier) and one line per
bucket range of the assignment; --json prints it as it is.`,
		Example: `  rockstream cluster status
  rockstream cluster status --server http://10.0.0.5:6876
  rockstream cluster status --control 127.0.0.1:6876`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if controlAddr != "" {
				if cmd.Flags().Changed("server") {
					return usageError{fmt.Errorf("give --server URL or --control ADDR, not both")}
				}
				body, err := getServer(cmd.Context(), controlAddr, "/cluster/status")
				if err != nil {
					return err
				}
				var st controlStatus
				return writeAnswer(cmd, body, asJSON, &st, func(w io.Writer) { printControlStatus(w, &st) })
			}
			body, err := getHealth(cmd, server)
			if err != nil {
				return err
			}
			var h admin.Health
			return writeAnswer(cmd, body, asJSON, &h, func(w io.Writer) { printClusterStatus(w, &h) })
		},
	}
	answerFlags(status, &server, &asJSON)
	status.Flags().StringVar(&controlAddr, "control", "", "ask the control process at `ADDR` (its --http-addr) about the cluster of processes")
	cmd.AddCommand(status)
	for _, c := range cmd.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	return cmd
}

// getHealth reads /health, whose status is 503 while the server is not
// ready: its body still says what is known.
func getHealth(cmd *cobra.Command, server string) ([]byte, error) {
	body, err := getServer(cmd.Context(), server, "/health")
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\t\n", workerLabel(h, wk.ID), wk.Role, strings.Join(wk.Buckets, ","), wk.BucketCount, wk.State, wk.AppliedEpoch)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nshards")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "buckets\towner\tfrontier\tlag epochs\tlag ms\t")
	for _, s := range h.Shards {
		fmt.Fprintf(tw, "%d-%d\t%s\t%d\t%d\t%d\t\n", s.FirstBucket, s.LastBucket, workerLabel(h, s.Owner), s.Frontier, s.LagEpochs, s.LagMs)
	}
	tw.Flush()
}

// workerLabel names worker id of h: a cluster's workers by their node
// ID, a single process's by number.
func workerLabel(h *admin.Health, id int) string {
	for _, wk := range h.Workers {
		if wk.ID == id && wk.Name != "" {
			return wk.Name
		}
	}
	return fmt.Sprint(id)
}

func printControlStatus(w io.Writer, st *controlStatus) {
	leader := st.Leader
	if leader == "" {
		leader = "none"
	}
	fmt.Fprintf(w, "cluster %s, leader %s, revision %d, frontier %d, checkpoint %d\n", st.Cluster, leader, st.Revision, st.Committed, st.Checkpoint)
	if c := st.Coordinator; c != nil {
		fmt.Fprintf(w, "this control leads: term %d, %s at revision %d, committed %d\n", c.Term, c.Phase, c.Rev, c.Committed)
	}
	fmt.Fprintf(w, "etcd %s, objects %s\n", strings.Join(st.Etcd, ","), st.Objects)
	fmt.Fprintln(w, "\nworkers")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "worker\tmember\taddress\tstate\tbuckets\tcount\tapplied epoch\tlag epochs\t")
	for _, wk := range st.Workers {
		state, buckets, count, applied, lag := "", "", "", "", ""
		if wk.Error != "" {
			state = "unreachable"
		}
		if r := wk.Report; r != nil {
			state, buckets = r.Phase, strings.Join(r.Buckets, ",")
			count, applied = fmt.Sprint(r.BucketCount), fmt.Sprint(r.Applied)
		}
		if wk.LagEpochs != nil {
			lag = fmt.Sprint(*wk.LagEpochs)
		}
		fmt.Fprintf(tw, "%s\t%v\t%s\t%s\t%s\t%s\t%s\t%s\t\n", wk.ID, wk.Member, wk.Address, state, buckets, count, applied, lag)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nshards")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "buckets\towner\t")
	for _, s := range st.Assignment {
		fmt.Fprintf(tw, "%d-%d\t%s\t\n", s.First, s.Last, s.Owner)
	}
	tw.Flush()
}
