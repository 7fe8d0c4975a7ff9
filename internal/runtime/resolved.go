package runtime

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/session"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
)

// resolvedSettings are the settings every execution reads, looked up and
// parsed once for a version of the session's settings
// (session.Settings.Version) rather than by name at each use: the time
// zone, work_mem, temp_file_limit, statement_timeout, the recursion limit
// and the session's identity. SET, RESET, the end of a transaction block
// that changed a setting and a return to a savepoint move the version,
// so the next read resolves them again.
type resolvedSettings struct {
	version uint64
	valid   bool

	zone             types.Zone
	workMem          int64
	tempFileLimit    int64
	statementTimeout time.Duration
	minEpoch         uint64 // rockstream.min_epoch (freshness.go)
	recursionLimit   int
	user, role       string // session_authorization; role, "" for none
	searchPath       string
	database         string
	defaultReadOnly  bool
}

// resolved returns the session's resolved settings at the settings'
// current version.
func (s *Session) resolved() *resolvedSettings {
	r := &s.res
	if v := s.settings.Version(); !r.valid || r.version != v {
		*r = resolveSettings(&s.settings)
		r.version, r.valid = v, true
	}
	return r
}

func resolveSettings(set *session.Settings) resolvedSettings {
	r := resolvedSettings{
		zone:            types.UTCZone,
		workMem:         session.WorkMemBytes(set.Get("work_mem")),
		tempFileLimit:   session.TempFileLimitBytes(set.Get("temp_file_limit")),
		recursionLimit:  ops.DefaultMaxIterations,
		user:            set.Get("session_authorization"),
		searchPath:      set.Get("search_path"),
		database:        set.Get("current_database"),
		defaultReadOnly: set.Get("default_transaction_read_only") == "on",
	}
	if z, err := types.LoadZone(set.Get("timezone")); err == nil {
		r.zone = z
	}
	r.statementTimeout, _ = session.ParseDuration(set.Get("statement_timeout"))
	r.minEpoch, _ = session.ParseEpoch(set.Get("rockstream.min_epoch"))
	if n, err := strconv.Atoi(set.Get("rockstream.max_recursion_iterations")); err == nil && n >= 1 {
		r.recursionLimit = n
	}
	if role := set.Get("role"); role != "none" {
		r.role = role
	}
	return r
}

// pathMemo is the search path a session's statements resolved against a
// catalog at a version of the session's settings (sessionCatalog).
type pathMemo struct {
	cat     *catalog
	version uint64
	path    []string
}

// sessionCatalog returns cat.withSession for a statement of s reading r.
// The search path depends only on the settings and on cat's schemas
// when cat has no schemas of its own (usablePath then reads nothing), so
// it is resolved once for each catalog and settings version; a catalog
// that changed is a new one (a DDL commit replaces it).
func (s *Session) sessionCatalog(ctx context.Context, cat *catalog, r state.Reader) *catalog {
	info := s.sessionInfo()
	if len(cat.schemas) > 0 {
		return cat.withSession(ctx, info, r)
	}
	m, v := &s.path, s.settings.Version()
	if m.cat != cat || m.version != v || m.path == nil {
		*m = pathMemo{cat: cat, version: v, path: slices.Clip(cat.sessionPath(info))}
	}
	return cat.withSessionPath(ctx, info, r, m.path)
}

// SettingsVersion returns the version of the session's settings: a
// caller that derived something from them (the gateway's reported
// parameters) need not derive it again while it stays the same.
func (s *Session) SettingsVersion() uint64 { return s.settings.Version() }

// StatementTimeout returns the session's statement_timeout (0 for none).
func (s *Session) StatementTimeout() time.Duration { return s.resolved().statementTimeout }
