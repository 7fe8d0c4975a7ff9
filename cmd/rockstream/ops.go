package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/internal/admin"
	"github.com/rockstream/rockstream/internal/runtime"
)

// The operator commands that read a running server through its HTTP
// endpoints (docs/operations.md#operator-endpoints): explain, audit tail,
// resource usage, support bundle.

// defaultServer is the HTTP address `rockstream start` listens on by
// default.
const defaultServer = "http://" + defaultHTTPAddr

// getServer reads path from a running server: the body, or an error
// carrying the server's message and SQLSTATE.
func getServer(ctx context.Context, server, path string) ([]byte, error) {
	target, err := serverURL(server, path)
	if err != nil {
		return nil, usageError{err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the server at %s: %w", server, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the answer of %s: %w", target, err)
	}
	if resp.StatusCode != http.StatusOK {
		if err := refusal(body); err != nil {
			return nil, err
		}
		return body, fmt.Errorf("the server answered %s for %s", resp.Status, path)
	}
	return body, nil
}

// refusal is the error a server's refusal (an admin.ActionError body)
// reports, nil when body is not one.
func refusal(body []byte) error {
	var ae admin.ActionError
	if json.Unmarshal(body, &ae) != nil || ae.Error == "" {
		return nil
	}
	if ae.SQLState == "" {
		return fmt.Errorf("the server refused: %s", ae.Error)
	}
	return fmt.Errorf("the server refused: %s (SQLSTATE %s)", ae.Error, ae.SQLState)
}

func newExplainCommand() *cobra.Command {
	var server string
	var estimate bool
	cmd := &cobra.Command{
		Use:   "explain VIEW [--estimate] [--server URL]",
		Short: "Show the circuit of a view, with each operator's state size and cost",
		Long: `explain prints EXPLAIN INCREMENTAL of VIEW, as a running server answers it:
the circuit that maintains the view, one operator a line.

With --estimate it prints EXPLAIN INCREMENTAL ESTIMATE: each operator's
state (keys and bytes) measured from the store for a materialized view,
beside the state and rows out estimated from samples of the relations it
reads — the estimate the same statement gives for a query before its view
exists (docs/sql.md#explain-incremental-estimate).

VIEW is written as in SQL: unquoted names are folded to lower case.`,
		Example: `  rockstream explain sales_by_store
  rockstream explain sales_by_store --estimate --server http://127.0.0.1:6876`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := url.Values{"view": {args[0]}}
			if estimate {
				q.Set("estimate", "true")
			}
			body, err := getServer(cmd.Context(), server, "/admin/explain?"+q.Encode())
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(body)
			return err
		},
	}
	cmd.Flags().StringVar(&server, "server", defaultServer, "the running server's HTTP address, as `URL` http://host:port")
	cmd.Flags().BoolVar(&estimate, "estimate", false, "show each operator's measured and estimated state and rows")
	return cmd
}

func newAuditCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read the audit log",
		Args:  cobra.NoArgs,
	}
	var server, dir string
	var follow bool
	var lines int
	tail := &cobra.Command{
		Use:   "tail [-n N] [--follow] [--server URL | --storage DIR]",
		Short: "Print the last events of the audit log, as JSON lines",
		Long: `tail prints the last N events of the audit log (DDL, role and privilege
changes, connector state changes, checkpoints), one JSON object a line
with seq, time, role, kind, object, statement, outcome, sqlstate and
detail (docs/operations.md#audit-log). With --follow it then prints new
events as they come, until interrupted.

It reads a running server's log through --server (default ` + defaultServer + `),
or the file itself with --storage DIR, which works with the server
stopped.`,
		Example: `  rockstream audit tail
  rockstream audit tail -n 100 --follow
  rockstream audit tail --storage ./data`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case lines < 0:
				return usageError{fmt.Errorf("-n must be at least 0")}
			case dir != "" && cmd.Flags().Changed("server"):
				return usageError{fmt.Errorf("give --server URL or --storage DIR, not both")}
			}
			events, err := readAuditLines(cmd, server, dir, 0)
			if err != nil {
				return err
			}
			var last uint64
			emit := func(lines []auditLine) {
				for _, l := range lines {
					last = max(last, l.seq)
					fmt.Fprintln(cmd.OutOrStdout(), l.text)
				}
			}
			if n := len(events); n > 0 {
				last = events[n-1].seq
			}
			emit(events[max(0, len(events)-lines):])
			for follow {
				select {
				case <-cmd.Context().Done():
					return nil
				case <-time.After(500 * time.Millisecond):
				}
				events, err := readAuditLines(cmd, server, dir, last)
				if err != nil {
					return err
				}
				emit(events)
			}
			return nil
		},
	}
	tail.Flags().StringVar(&server, "server", defaultServer, "the running server's HTTP address, as `URL` http://host:port")
	tail.Flags().StringVar(&dir, "storage", "", "read the audit log of the store in `DIR` directly")
	tail.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events")
	tail.Flags().IntVarP(&lines, "lines", "n", 20, "print the last `N` events")
	cmd.AddCommand(tail)
	for _, c := range cmd.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	return cmd
}

// auditLine is one event of the audit log, as JSON.
type auditLine struct {
	seq  uint64
	text string
}

// readAuditLines reads the audit log's events after seq after: from the
// file in dir when dir is set, else from the server.
func readAuditLines(cmd *cobra.Command, server, dir string, after uint64) ([]auditLine, error) {
	var out []auditLine
	if dir != "" {
		events, err := runtime.ReadAuditLog(filepath.Join(dir, runtime.AuditFileName), after)
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(dir); serr != nil {
				return nil, usageError{fmt.Errorf("cannot read %s: %w", dir, serr)}
			}
			return nil, nil // no event yet
		}
		if err != nil {
			return nil, err
		}
		for _, ev := range events {
			b, err := json.Marshal(ev)
			if err != nil {
				return nil, err
			}
			out = append(out, auditLine{ev.Seq, string(b)})
		}
		return out, nil
	}
	body, err := getServer(cmd.Context(), server, fmt.Sprintf("/admin/audit?after=%d", after))
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" {
			continue
		}
		var ev runtime.AuditEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			return nil, fmt.Errorf("the audit log holds a line that does not decode: %w", err)
		}
		out = append(out, auditLine{ev.Seq, line})
	}
	return out, nil
}

func newResourceCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "resource",
		Short: "Report what a running server uses",
		Args:  cobra.NoArgs,
	}
	var server string
	var asJSON bool
	usage := &cobra.Command{
		Use:   "usage [--server URL] [--json]",
		Short: "Print the memory, disk and state per table and view of a running server",
		Long: `usage prints what a running server uses: its memory (resident set, Go
heap, storage cache and memtable), its storage directory's size (tables,
write-ahead log, auxiliary files), and for every table and materialized
view the rows and bytes it stores, a view's operator state and its change
log (logical bytes, before compression). It reads every stored key once,
so it takes time on a large store. --json prints the answer of GET
/admin/resources as it is.`,
		Example: `  rockstream resource usage
  rockstream resource usage --json --server http://10.0.0.5:6876`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := getServer(cmd.Context(), server, "/admin/resources")
			if err != nil {
				return err
			}
			var u runtime.ResourceUsage
			return writeAnswer(cmd, body, asJSON, &u, func(w io.Writer) { printUsage(w, &u) })
		},
	}
	answerFlags(usage, &server, &asJSON)
	cmd.AddCommand(usage)
	for _, c := range cmd.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	return cmd
}

// answerFlags adds --server and --json to a command that reads a running
// server and prints its JSON answer, as it is or readably (writeAnswer).
func answerFlags(cmd *cobra.Command, server *string, asJSON *bool) {
	cmd.Flags().StringVar(server, "server", defaultServer, "the running server's HTTP address, as `URL` http://host:port")
	cmd.Flags().BoolVar(asJSON, "json", false, "print JSON")
}

// writeAnswer writes a server's JSON answer body: as it is with asJSON,
// else decoded into v and printed readably by print.
func writeAnswer(cmd *cobra.Command, body []byte, asJSON bool, v any, print func(w io.Writer)) error {
	if asJSON {
		_, err := cmd.OutOrStdout().Write(body)
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("the answer does not decode: %w", err)
	}
	print(cmd.OutOrStdout())
	return nil
}

func printUsage(w io.Writer, u *runtime.ResourceUsage) {
	m := u.Memory
	fmt.Fprintf(w, "epoch %d\n", u.Epoch)
	fmt.Fprintf(w, "memory: rss %s, go heap %s, go runtime %s, storage cache %s, memtable %s\n",
		humanBytes(m.RSSBytes), humanBytes(m.HeapBytes), humanBytes(m.SysBytes), humanBytes(uint64(m.CacheBytes)), humanBytes(m.MemTableBytes))
	if d := u.Disk; d != nil {
		fmt.Fprintf(w, "disk: %s in %s (%d tables of %s, write-ahead log %s, auxiliary %s)\n",
			humanBytes(uint64(d.TotalBytes)), d.Dir, d.Tables, humanBytes(uint64(d.TableBytes)), humanBytes(uint64(d.LogBytes)), humanBytes(uint64(d.AuxiliaryBytes)))
	} else {
		fmt.Fprintln(w, "disk: none (in memory)")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "relation\tkind\trows\trow bytes\tstate keys\tstate bytes\tchange log bytes\t")
	for _, r := range u.Relations {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\t%s\t\n", r.Name, r.Kind, r.Rows, humanBytes(uint64(r.RowBytes)),
			r.StateKeys, humanBytes(uint64(r.StateBytes)), humanBytes(uint64(r.ChangeLogBytes)))
	}
	tw.Flush()
}

func newSupportCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "support",
		Short: "Collect what support needs",
		Args:  cobra.NoArgs,
	}
	var server, dir, out string
	bundle := &cobra.Command{
		Use:   "bundle [-o FILE] [--server URL] [--storage DIR]",
		Short: "Write one tar.gz of logs, metrics, catalog, doctor report and versions",
		Long: `bundle writes one gzipped tar archive (default rockstream-support-<time>.tar.gz)
for a support request:

  version.json       this binary's version
  health.json        the server's /health
  metrics.txt        the server's /metrics
  catalog.json       relations, columns, view definitions, connectors and
                     sessions, without secrets (GET /admin/catalog)
  resources.json     memory, disk and state per view (GET /admin/resources)
  logs.txt           the server's recent log lines (GET /admin/logs)
  audit.jsonl        the audit log
  doctor.txt         with --storage DIR: rockstream doctor's report of DIR
                     (a store a running server holds is refused; the
                     report says so)
  errors.txt         what could not be collected, and why

Secrets (passwords, secret connector options, passwords in connection
strings) are removed before anything is written. What the server cannot
answer is listed in errors.txt; the command fails only when nothing at
all could be collected.`,
		Example: `  rockstream support bundle
  rockstream support bundle -o /tmp/rs.tar.gz --storage ./data`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				out = "rockstream-support-" + time.Now().UTC().Format("20060102T150405Z") + ".tar.gz"
			}
			files, problems := collectSupport(cmd, server, dir)
			if len(files) == 1 { // version.json alone
				return fmt.Errorf("nothing could be collected:\n  %s", strings.Join(problems, "\n  "))
			}
			if len(problems) > 0 {
				files = append(files, supportFile{"errors.txt", []byte(strings.Join(problems, "\n") + "\n")})
			}
			if err := writeBundle(out, files); err != nil {
				return err
			}
			var names []string
			for _, f := range files {
				names = append(names, f.name)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s\n", out, strings.Join(names, ", "))
			return nil
		},
	}
	bundle.Flags().StringVarP(&out, "output", "o", "", "the archive to write, as `FILE`")
	bundle.Flags().StringVar(&server, "server", defaultServer, "the running server's HTTP address, as `URL` http://host:port")
	bundle.Flags().StringVar(&dir, "storage", "", "also run doctor on, and read the audit log of, the store in `DIR`")
	cmd.AddCommand(bundle)
	for _, c := range cmd.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	return cmd
}

type supportFile struct {
	name string
	body []byte
}

// collectSupport gathers the bundle's files, and what it could not get.
func collectSupport(cmd *cobra.Command, server, dir string) ([]supportFile, []string) {
	var files []supportFile
	var problems []string
	v, _ := json.MarshalIndent(currentVersion(), "", "  ")
	files = append(files, supportFile{"version.json", append(v, '\n')})
	reachable := true
	for _, e := range []struct{ name, path string }{
		{"health.json", "/health"}, {"metrics.txt", "/metrics"}, {"catalog.json", "/admin/catalog"},
		{"resources.json", "/admin/resources"}, {"logs.txt", "/admin/logs"}, {"audit.jsonl", "/admin/audit"},
	} {
		if !reachable {
			break
		}
		body, err := getServer(cmd.Context(), server, e.path)
		if err != nil && e.name == "health.json" && strings.Contains(err.Error(), "503") && len(body) > 0 {
			err = nil // a degraded server's /health is what support wants
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", e.name, err))
			if strings.Contains(err.Error(), "cannot reach the server") {
				reachable = false
			}
			continue
		}
		files = append(files, supportFile{e.name, []byte(runtime.RedactSecrets(string(body)))})
	}
	if dir != "" {
		if !reachable {
			if events, err := runtime.ReadAuditLog(filepath.Join(dir, runtime.AuditFileName), 0); err == nil {
				var b bytes.Buffer
				for _, ev := range events {
					line, _ := json.Marshal(ev)
					b.Write(append(line, '\n'))
				}
				files = append(files, supportFile{"audit.jsonl", b.Bytes()})
			} else {
				problems = append(problems, fmt.Sprintf("audit.jsonl: %v", err))
			}
		}
		var b bytes.Buffer
		if err := runDoctor(&b, dir, false); err != nil && !errors.Is(err, errDoctorProblems) {
			fmt.Fprintf(&b, "doctor could not check %s: %v\n", dir, err)
		}
		files = append(files, supportFile{"doctor.txt", []byte(runtime.RedactSecrets(b.String()))})
	}
	return files, problems
}

// writeBundle writes files into a gzipped tar at path, through a
// temporary file renamed into place once complete.
func writeBundle(path string, files []supportFile) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".rockstream-support-*")
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	gz := gzip.NewWriter(tmp)
	tw := tar.NewWriter(gz)
	now := time.Now()
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "rockstream-support/" + f.name, Mode: 0o600, Size: int64(len(f.body)), ModTime: now}); err != nil {
			return err
		}
		if _, err := tw.Write(f.body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
