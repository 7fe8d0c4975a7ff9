package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/internal/lake"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/storage"
)

func newCheckpointCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Copy a storage directory to object storage and back",
		Long: `A checkpoint is a consistent copy of a store in object storage: of a stopped
server's storage directory (create --storage) or of a running server
(create --server), at file:///path for a local directory, or
s3://bucket/prefix for S3 and S3-compatible stores. Checkpoints are incremental: the immutable table files
already uploaded by an earlier checkpoint to the same URL are not sent
again. Each checkpoint has a manifest listing every file with its size and
SHA-256; restore verifies them all.

For s3:// URLs, these environment variables configure the store:
  ROCKSTREAM_OBJECT_STORE_ENDPOINT           endpoint URL (MinIO and others; path-style addressing)
  ROCKSTREAM_OBJECT_STORE_REGION             region
  ROCKSTREAM_OBJECT_STORE_ACCESS_KEY_ID      access key
  ROCKSTREAM_OBJECT_STORE_SECRET_ACCESS_KEY  secret key`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCheckpointCreateCommand(), newCheckpointRestoreCommand(), newCheckpointListCommand())
	for _, c := range cmd.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	return cmd
}

func newCheckpointCreateCommand() *cobra.Command {
	var dir, to, server string
	var keep int
	cmd := &cobra.Command{
		Use:   "create (--storage DIR | --server URL) --to URL [--keep N]",
		Short: "Upload a checkpoint of a storage directory or a running server",
		Long: `create uploads a consistent copy of the committed state to URL and makes it
the latest checkpoint there.

With --storage DIR, it copies a stopped server's directory. DIR must hold
a store: create does not make one. Stop the server using DIR first.

With --server URL (the server's HTTP address, as in http://127.0.0.1:6876),
the running server takes the checkpoint itself while it keeps serving
(POST /admin/checkpoint): the copy holds exactly the epochs committed up to
one epoch, which the output names, and writes keep committing meanwhile.

Either way the copy is checked as start-up checks a store (every block of
every table, the MANIFEST, the write-ahead log) before anything is
uploaded; damage stops it with an error naming the file. With --keep N,
only the N newest checkpoints at URL are kept afterwards: older ones, and
the table files no kept checkpoint lists, are deleted.`,
		Example: `  rockstream checkpoint create --storage ./data --to file:///backups/rs
  rockstream checkpoint create --server http://127.0.0.1:6876 --to s3://bucket/rockstream --keep 7`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case to == "" || (dir == "") == (server == ""):
				return usageError{fmt.Errorf("--to URL and one of --storage DIR or --server URL are required")}
			case keep < 0:
				return usageError{fmt.Errorf("--keep must be at least 1")}
			case server != "":
				return checkpointServer(cmd, server, to, keep)
			}
			st, err := storage.Open(storage.Options{Dir: dir, Logger: quietLogger(), MustExist: true, EpochKey: runtime.FrontierKey()})
			if err != nil {
				if strings.Contains(err.Error(), "another process is using it") {
					return usageError{fmt.Errorf("cannot open %s: %w; to checkpoint a running server, use --server with its HTTP address (--http-addr, as in %s)", dir, err, defaultServer)}
				}
				return usageError{fmt.Errorf("cannot open %s: %w", dir, err)}
			}
			defer st.Close()
			if isLake, err := lake.IsLake(st); err != nil {
				return err
			} else if isLake {
				if keep > 0 {
					return usageError{fmt.Errorf("--keep is not supported for lake checkpoints")}
				}
				return checkpointLake(cmd, st, to)
			}
			frontier, err := runtime.Frontier(st)
			if err != nil {
				return err
			}
			m, err := storage.CreateCheckpoint(cmd.Context(), st, to, map[string]string{"frontier": strconv.FormatUint(frontier, 10)}, storage.NewTerminalProgress(os.Stderr))
			if err != nil {
				return err
			}
			var pruned *storage.PruneResult
			if keep > 0 {
				if pruned, err = storage.PruneCheckpoints(cmd.Context(), to, keep); err != nil {
					return err
				}
			}
			printCheckpoint(cmd, &runtime.CheckpointResult{Manifest: m, Pruned: pruned}, to)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "storage", "", "the storage `DIR` to copy (of a stopped server)")
	cmd.Flags().StringVar(&server, "server", "", "the HTTP address of a running server to checkpoint, as `URL` http://host:port")
	cmd.Flags().StringVar(&to, "to", "", "destination `URL` (file:///path or s3://bucket/prefix)")
	cmd.Flags().IntVar(&keep, "keep", 0, "keep only the `N` newest checkpoints at the destination (0 keeps all)")
	return cmd
}

// printCheckpoint reports a checkpoint created and what retention
// deleted.
func printCheckpoint(cmd *cobra.Command, r *runtime.CheckpointResult, to string) {
	m := r.Manifest
	fmt.Fprintf(cmd.OutOrStdout(), "checkpoint %s of epoch %d at %s: %d files, %d uploaded (%d bytes)\n",
		m.ID, m.Epoch, to, len(m.Files), m.Uploaded.Files, m.Uploaded.Bytes)
	if p := r.Pruned; p != nil {
		fmt.Fprintf(cmd.OutOrStdout(), "kept %d checkpoints, deleted %d (%d objects, %d tables of %d bytes)\n",
			len(p.Kept), len(p.Deleted), p.DeletedObjects, p.DeletedTables.Files, p.DeletedTables.Bytes)
	}
}

func newCheckpointRestoreCommand() *cobra.Command {
	var dir, from, id string
	cmd := &cobra.Command{
		Use:   "restore --from URL [--id ID] --storage DIR",
		Short: "Restore a checkpoint into a new storage directory",
		Long: `restore downloads the latest checkpoint at URL, or checkpoint ID (see
checkpoint list), into DIR, which must be empty or missing, verifies every
file against the manifest, and checks that the files open as a store. A
damaged file stops the restore with an error naming it; nothing is left in
DIR, and a DIR the restore created is removed.`,
		Example: `  rockstream checkpoint restore --from file:///backups/rs --storage ./data2
  rockstream checkpoint restore --from file:///backups/rs --id 20261201T210641.774029376Z-7b98bef2 --storage ./data2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" || from == "" {
				return usageError{fmt.Errorf("--from URL and --storage DIR are required")}
			}
			if err := storage.RestoreCheckpointID(cmd.Context(), from, id, dir, storage.NewTerminalProgress(os.Stderr)); err != nil {
				return err
			}
			what := from
			if id != "" {
				what = "checkpoint " + id + " of " + from
			}
			fmt.Fprintf(cmd.OutOrStdout(), "restored %s into %s\n", what, dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "storage", "", "the new storage `DIR`")
	cmd.Flags().StringVar(&from, "from", "", "source `URL` (file:///path or s3://bucket/prefix)")
	cmd.Flags().StringVar(&id, "id", "", "restore checkpoint `ID` instead of the latest")
	return cmd
}

func newCheckpointListCommand() *cobra.Command {
	var from string
	cmd := &cobra.Command{
		Use:   "list --from URL",
		Short: "List the checkpoints at a location",
		Long: `list prints the complete checkpoints at URL, oldest first: id, creation
time, epoch, files and bytes, and which is the latest (what restore takes
without --id).`,
		Example: `  rockstream checkpoint list --from s3://bucket/rockstream`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if from == "" {
				return usageError{fmt.Errorf("--from URL is required")}
			}
			list, err := storage.ListCheckpoints(cmd.Context(), from)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "id\tcreated\tepoch\tfiles\tbytes\t")
			for _, c := range list {
				latest := ""
				if c.Latest {
					latest = "latest"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", c.ID, c.Created.Format(time.RFC3339), c.Epoch, c.Files, c.Bytes, latest)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the checkpoint location `URL`")
	return cmd
}
