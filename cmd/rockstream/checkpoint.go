package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/internal/lake"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/storage"
)

func newCheckpointCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Copy a storage directory to object storage and back",
		Long: `A checkpoint is a consistent copy of a storage directory in object storage:
file:///path for a local directory, or s3://bucket/prefix for S3 and
S3-compatible stores. Checkpoints are incremental: the immutable table files
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
	cmd.AddCommand(newCheckpointCreateCommand(), newCheckpointRestoreCommand())
	for _, c := range cmd.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	return cmd
}

func newCheckpointCreateCommand() *cobra.Command {
	var dir, to string
	cmd := &cobra.Command{
		Use:   "create --storage DIR --to URL",
		Short: "Upload a checkpoint of a storage directory",
		Long: `create uploads a consistent copy of the committed state in DIR to URL and
makes it the latest checkpoint there. DIR must hold a store: create does not
make one. The copy is checked as start-up checks a store (every block of
every table, the MANIFEST, the write-ahead log) before anything is
uploaded; damage stops it with an error naming the file. Stop the server
using DIR first.`,
		Example: `  rockstream checkpoint create --storage ./data --to file:///backups/rs
  rockstream checkpoint create --storage ./data --to s3://bucket/rockstream`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" || to == "" {
				return usageError{fmt.Errorf("--storage DIR and --to URL are required")}
			}
			st, err := storage.Open(storage.Options{Dir: dir, Logger: quietLogger(), MustExist: true, EpochKey: runtime.FrontierKey()})
			if err != nil {
				return usageError{fmt.Errorf("cannot open %s: %w", dir, err)}
			}
			defer st.Close()
			if isLake, err := lake.IsLake(st); err != nil {
				return err
			} else if isLake {
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
			fmt.Fprintf(cmd.OutOrStdout(), "checkpoint %s of epoch %d at %s: %d files\n", m.ID, frontier, to, len(m.Files))
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "storage", "", "the storage `DIR` to copy")
	cmd.Flags().StringVar(&to, "to", "", "destination `URL` (file:///path or s3://bucket/prefix)")
	return cmd
}

func newCheckpointRestoreCommand() *cobra.Command {
	var dir, from string
	cmd := &cobra.Command{
		Use:   "restore --from URL --storage DIR",
		Short: "Restore the latest checkpoint into a new storage directory",
		Long: `restore downloads the latest checkpoint at URL into DIR, which must be empty
or missing, verifies every file against the manifest, and checks that the
files open as a store. A damaged file stops the restore with an error
naming it; nothing is left in DIR, and a DIR the restore created is
removed.`,
		Example: `  rockstream checkpoint restore --from file:///backups/rs --storage ./data2`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" || from == "" {
				return usageError{fmt.Errorf("--from URL and --storage DIR are required")}
			}
			if err := storage.RestoreCheckpoint(cmd.Context(), from, dir, storage.NewTerminalProgress(os.Stderr)); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "restored %s into %s\n", from, dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "storage", "", "the new storage `DIR`")
	cmd.Flags().StringVar(&from, "from", "", "source `URL` (file:///path or s3://bucket/prefix)")
	return cmd
}
