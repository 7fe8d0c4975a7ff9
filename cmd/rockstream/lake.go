package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"

	"time"

	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/internal/lake"
	"github.com/rockstream/rockstream/internal/storage"
)

// defaultLakeHTTPAddr is where `rockstream lake` serves /health and
// /metrics: next to rockstream start's HTTP port, not on it.
const defaultLakeHTTPAddr = "127.0.0.1:6877"

func newLakeCommand() *cobra.Command {
	var dir, pgAddr, httpAddr, dataPath, tlsCert, tlsKey, usersFile, auth, metadataSchema string
	var noBootstrap bool
	cmd := &cobra.Command{
		Use:   "lake --storage DIR [--pg-addr ADDR] [--data-path URL] [flags]",
		Short: "Serve a DuckLake catalog (RockLake) to DuckDB",
		Long: `lake runs RockLake, a DuckLake catalog server: DuckDB's ducklake extension
attaches it as its catalog database over the PostgreSQL protocol, on
--pg-addr (default ` + lake.DefaultAddr + `):

  ATTACH 'ducklake:postgres:host=127.0.0.1 port=5442 dbname=lake user=duckdb'
    AS lake (DATA_PATH 's3://bucket/lake/');

The catalog lives in DIR. On first start it is bootstrapped with the
DuckLake 1.0 catalog (its 28 tables and initial rows; --data-path is the
data_path it records; --metadata-schema puts it in a schema of that name,
for ATTACH ... (METADATA_SCHEMA 'NAME')), so that DuckDB opens it as an
existing lake; with --no-bootstrap it stays empty and DuckDB initializes
it itself. Every commit is atomic and fsynced before it is
acknowledged.

RockLake answers only the statements DuckDB sends for DuckLake
(docs/lake.md); anything else fails with SQLSTATE 0A000. /health,
/metrics and POST /admin/checkpoint (rockstream checkpoint create
--server) are served on --http-addr (default ` + defaultLakeHTTPAddr + `).`,
		Example: `  rockstream lake --storage ./lake --data-path s3://bucket/lake/
  rockstream lake --storage ./lake --pg-addr 0.0.0.0:5442 --tls-cert c.pem --tls-key k.pem --users-file users --auth scram-sha-256`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return usageError{fmt.Errorf("--storage DIR is required")}
			}
			cfg := lake.Config{Dir: dir, DataPath: dataPath, NoBootstrap: noBootstrap, Auth: auth, MetadataSchema: metadataSchema,
				Logger: slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))}
			var err error
			if cfg.TLS, err = loadTLS(tlsCert, tlsKey, "", ""); err != nil {
				return usageError{err}
			}
			if usersFile != "" {
				if cfg.Users, err = readUsersFile(usersFile); err != nil {
					return usageError{err}
				}
			}
			if auth != "" && auth != lake.AuthTrust && usersFile == "" {
				return usageError{fmt.Errorf("--auth %s needs --users-file", auth)}
			}
			return runLake(cmd.Context(), cfg, pgAddr, httpAddr, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "storage", "", "the lake's storage `DIR` (created when missing)")
	f.StringVar(&pgAddr, "pg-addr", lake.DefaultAddr, "serve DuckDB on `ADDR` (host:port)")
	f.StringVar(&httpAddr, "http-addr", defaultLakeHTTPAddr, "serve /health, /metrics and /admin/checkpoint on `ADDR`; empty turns HTTP off")
	f.StringVar(&dataPath, "data-path", "", "the lake's data path (`URL` or directory) written at bootstrap")
	f.BoolVar(&noBootstrap, "no-bootstrap", false, "leave a new catalog empty for DuckDB to initialize")
	f.StringVar(&metadataSchema, "metadata-schema", "", "bootstrap the catalog in schema `NAME` (DuckDB's METADATA_SCHEMA) instead of public")
	f.StringVar(&tlsCert, "tls-cert", "", "TLS certificate chain `FILE` (PEM), with --tls-key")
	f.StringVar(&tlsKey, "tls-key", "", "TLS private key `FILE` (PEM), with --tls-cert")
	f.StringVar(&usersFile, "users-file", "", "`FILE` of name:password lines for password and scram-sha-256 authentication")
	f.StringVar(&auth, "auth", "", "client authentication: `trust`, password or scram-sha-256 (default trust, scram-sha-256 with --users-file)")
	return cmd
}

// runLake serves a lake until ctx ends.
func runLake(ctx context.Context, cfg lake.Config, pgAddr, httpAddr string, out io.Writer) error {
	srv, err := lake.Open(cfg)
	if err != nil {
		return usageError{err}
	}
	ln, err := net.Listen("tcp", pgAddr)
	if err != nil {
		return errors.Join(usageError{err}, srv.Close())
	}
	var hs *http.Server
	if httpAddr != "" {
		hln, err := net.Listen("tcp", httpAddr)
		if err != nil {
			ln.Close()
			return errors.Join(usageError{err}, srv.Close())
		}
		hs = &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go hs.Serve(hln)
		fmt.Fprintf(out, "RockLake HTTP on http://%s (/health, /metrics, /admin/checkpoint)\n", hln.Addr())
	}
	fmt.Fprintf(out, "RockLake serving the DuckLake catalog in %s on %s (revision %d)\n", cfg.Dir, ln.Addr(), srv.Store().Rev())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err = <-done:
	}
	if hs != nil {
		hs.Close()
	}
	return errors.Join(err, srv.Close())
}

// checkLake is the part of `rockstream doctor` that checks a lake
// directory's catalog, after the storage checks every store gets.
func checkLake(out io.Writer, st *storage.DB, problem func(error)) error {
	rep, err := lake.Check(st)
	if err != nil {
		problem(fmt.Errorf("lake catalog: %w", err))
		return nil
	}
	latest := "none"
	if rep.LatestSnapshot >= 0 {
		latest = strconv.FormatInt(rep.LatestSnapshot, 10)
	}
	fmt.Fprintf(out, "  lake: revision %d (%d commits), %d tables, %d row versions (%d live), %d DuckLake snapshots (latest %s)\n",
		rep.Revision, rep.Revision, rep.Tables, rep.Versions, rep.Live, rep.Snapshots, latest)
	for _, p := range rep.Problems {
		problem(errors.New(p))
	}
	return nil
}

// checkpointLake is `rockstream checkpoint create` on a lake directory:
// the manifest records the lake's revision.
func checkpointLake(cmd *cobra.Command, st *storage.DB, to string) error {
	rep, err := lake.Check(st)
	if err != nil {
		return err
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("the lake has %d problem(s); run rockstream doctor", len(rep.Problems))
	}
	m, err := storage.CreateCheckpoint(cmd.Context(), st, to, map[string]string{"lake_revision": strconv.FormatUint(rep.Revision, 10)}, storage.NewTerminalProgress(os.Stderr))
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "checkpoint %s of lake revision %d at %s: %d files\n", m.ID, rep.Revision, to, len(m.Files))
	return nil
}
