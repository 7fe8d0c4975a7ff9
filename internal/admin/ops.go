package admin

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
)

// The operator's read-only endpoints under /admin/, which the CLI's
// explain, audit tail, resource usage and support bundle read
// (docs/operations.md#operator-endpoints). Like /health they change
// nothing.

func (s *Server) routeOps(mux *http.ServeMux) {
	mux.HandleFunc("GET /admin/audit", s.serveAudit)
	mux.HandleFunc("GET /admin/explain", s.serveExplain)
	mux.HandleFunc("GET /admin/resources", s.serveResources)
	mux.HandleFunc("GET /admin/catalog", s.serveCatalog)
	mux.HandleFunc("GET /admin/logs", func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Logs == nil {
			writeActionError(w, errs.New(errs.FeatureNotSupported, "this server keeps no log lines"))
			return
		}
		writeText(w, http.StatusOK, string(s.cfg.Logs()))
	})
}

// engine returns the engine once the server is ready, or answers 503.
func (s *Server) readyEngine(w http.ResponseWriter) *runtime.Engine {
	eng := s.eng.Load()
	if eng == nil || !s.ready.Load() {
		writeActionError(w, errs.Newf(errs.PrerequisiteState, "the server is %s: try again once it is ready", s.status()))
		return nil
	}
	return eng
}

// serveAudit answers the audit log's lines with seq above ?after= (0 by
// default), as JSON lines. A server in memory keeps no audit log: 0A000.
func (s *Server) serveAudit(w http.ResponseWriter, r *http.Request) {
	if s.cfg.StorageDir == "" {
		writeActionError(w, errs.New(errs.FeatureNotSupported, "an instance in memory keeps no audit log: start the server with --storage DIR"))
		return
	}
	ServeAuditFile(w, r, filepath.Join(s.cfg.StorageDir, runtime.AuditFileName))
}

// ServeAuditFile answers GET /admin/audit?after=SEQ from the audit log at
// path: its whole lines past seq SEQ, as written (none when the file does
// not exist yet).
func ServeAuditFile(w http.ResponseWriter, r *http.Request, path string) {
	after, err := uintParam(r, "after")
	if err != nil {
		writeActionError(w, err)
		return
	}
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		writeActionError(w, errs.Newf(errs.IOError, "reading the audit log: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	// The lines are passed through as written: only whole lines past
	// after.
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasSuffix(line, "\n") {
			break
		}
		if seq, ok := lineSeq(line); ok && seq > after {
			_, _ = w.Write([]byte(line))
		}
	}
}

var seqRe = regexp.MustCompile(`^\{"seq":(\d+),`)

// lineSeq reads the seq of an audit line (AuditEvent encodes it first).
func lineSeq(line string) (uint64, bool) {
	m := seqRe.FindStringSubmatch(line)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	return n, err == nil
}

func uintParam(r *http.Request, name string) (uint64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, errs.Newf(errs.InvalidParameterValue, "%s must be a number, not %q", name, v)
	}
	return n, nil
}

// identRe is a relation name as SQL writes it: plain or quoted parts,
// optionally qualified.
var identRe = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")(?:\.(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+"))?$`)

// serveExplain answers EXPLAIN INCREMENTAL [ESTIMATE] of ?view= as text.
func (s *Server) serveExplain(w http.ResponseWriter, r *http.Request) {
	eng := s.readyEngine(w)
	if eng == nil {
		return
	}
	view := r.URL.Query().Get("view")
	if !identRe.MatchString(view) {
		writeActionError(w, errs.Newf(errs.InvalidParameterValue, "view must name a view, as SQL writes its name, not %q", view))
		return
	}
	q := "EXPLAIN INCREMENTAL "
	if est, _ := strconv.ParseBool(r.URL.Query().Get("estimate")); est {
		q += "ESTIMATE "
	}
	res, err := query(r.Context(), eng, q+view)
	if err != nil {
		writeActionError(w, err)
		return
	}
	var b strings.Builder
	for _, row := range res.Rows {
		b.WriteString(row[0].Str())
		b.WriteByte('\n')
	}
	writeText(w, http.StatusOK, b.String())
}

// query runs one statement in a session of its own.
func query(ctx context.Context, eng *runtime.Engine, q string) (*runtime.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	sess := eng.NewSession()
	defer sess.Close()
	sess.SetClient(runtime.ClientInfo{User: "admin", ApplicationName: "rockstream admin"})
	return sess.Exec(ctx, q, nil)
}

func (s *Server) serveResources(w http.ResponseWriter, r *http.Request) {
	eng := s.readyEngine(w)
	if eng == nil {
		return
	}
	u, err := eng.ResourceUsage(r.Context())
	if err != nil {
		writeActionError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, u)
}

// catalogQueries are what GET /admin/catalog reports: the catalog's
// relations, columns, view definitions and connectors (whose secret
// options the system relations already hide), and the sessions.
var catalogQueries = []struct{ name, sql string }{
	{"relations", "SELECT table_schema, table_name, table_type FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2"},
	{"columns", "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position"},
	{"materialized_views", "SELECT matviewname, definition FROM pg_catalog.pg_matviews ORDER BY 1"},
	{"views", "SELECT * FROM rockstream_catalog.views ORDER BY 1"},
	{"sources", "SELECT * FROM rockstream_catalog.sources ORDER BY 1"},
	{"sinks", "SELECT * FROM rockstream_catalog.sinks ORDER BY 1"},
	{"frontiers", "SELECT * FROM rockstream_catalog.frontiers"},
	{"sessions", "SELECT * FROM rockstream_catalog.sessions ORDER BY 1"},
}

// CatalogTable is one query's answer in GET /admin/catalog.
type CatalogTable struct {
	Columns []string    `json:"columns"`
	Rows    [][]*string `json:"rows"`
	Error   string      `json:"error,omitempty"`
}

// serveCatalog answers the catalog, without secrets: connector options
// as the system relations show them (secrets hidden), and statements
// (a session's query, a view's definition) with RedactSecrets applied.
func (s *Server) serveCatalog(w http.ResponseWriter, r *http.Request) {
	eng := s.readyEngine(w)
	if eng == nil {
		return
	}
	out := map[string]CatalogTable{}
	for _, q := range catalogQueries {
		var t CatalogTable
		res, err := query(r.Context(), eng, q.sql)
		if err != nil {
			t.Error = err.Error()
			out[q.name] = t
			continue
		}
		for _, c := range res.Columns {
			t.Columns = append(t.Columns, c.Name)
		}
		for _, row := range res.Rows {
			vals := make([]*string, len(row))
			for i, v := range row {
				if v.IsNull() {
					continue
				}
				text := runtime.RedactSecrets(types.Format(v, res.Columns[i].Type))
				vals[i] = &text
			}
			t.Rows = append(t.Rows, vals)
		}
		out[q.name] = t
	}
	WriteJSON(w, http.StatusOK, out)
}
