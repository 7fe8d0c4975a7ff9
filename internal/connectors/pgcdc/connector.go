package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/connectors"
	"github.com/rockstream/rockstream/internal/connectors/spec"
)

// The postgres source:
//
//	CREATE SOURCE name FROM POSTGRES (connection = '...', [password = '...',]
//	    [publication = '...',] [slot = '...',] [upstream_schema = '...'])
//	    FOR TABLES (t [, ...]) | INTO t | FOR ALL TABLES
//
// Each RockStream table named replicates the upstream table of the same
// name in upstream_schema (default public). The RockStream tables must
// exist with the upstream columns (same names, order and types) and, for
// an upstream table whose old rows PostgreSQL identifies by primary key,
// the same primary key. FOR ALL TABLES replicates every table of the
// publication, which must then be named. A publication that does not
// exist is created for the tables; the slot (default rockstream_<name>) is
// created with the initial snapshot.
func init() {
	connectors.Register(connectors.Kind{
		Kind:      spec.Kind{Name: "postgres", Secrets: []string{"password"}, Validate: validate},
		RunSource: runSource,
		Drop:      dropSource,
	})
}

var sourceOptions = []string{"connection", "password", "publication", "slot", "upstream_schema"}

var slotName = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

func validate(s *spec.Spec) error {
	if err := s.CheckOptions(sourceOptions, []string{"connection"}); err != nil {
		return err
	}
	if s.IntoSchema != "" {
		return errors.New("postgres source: INTO SCHEMA is not supported; name the tables with FOR TABLES (...)")
	}
	if s.AllTables {
		if _, ok := s.Option("publication"); !ok {
			return errors.New("postgres source: FOR ALL TABLES replicates the tables of a publication; set the publication option")
		}
	} else if s.Target == "" && len(s.Tables) == 0 {
		return errors.New("postgres source: name the tables to replicate with FOR TABLES (...) or INTO table")
	}
	if !slotName.MatchString(slot(s)) {
		return fmt.Errorf("postgres source: slot %q is not a valid replication slot name (lower-case letters, digits and underscores, at most 63)", slot(s))
	}
	if _, err := pgconn.ParseConfig(s.OptionDefault("connection", "")); err != nil {
		return fmt.Errorf("postgres source: option connection: %v", s.RedactText(err.Error()))
	}
	return nil
}

func slot(s *spec.Spec) string {
	return s.OptionDefault("slot", "rockstream_"+strings.ToLower(s.Name))
}

// connString is the connection option with the password option added.
func connString(s *spec.Spec) string {
	c := s.OptionDefault("connection", "")
	pw, ok := s.Option("password")
	if !ok {
		return c
	}
	if strings.HasPrefix(c, "postgres://") || strings.HasPrefix(c, "postgresql://") {
		sep := "?"
		if strings.Contains(c, "?") {
			sep = "&"
		}
		return c + sep + "password=" + urlEscape(pw)
	}
	return c + " password='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "'"
}

func urlEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// failed remembers the fatal error of each source definition that hit one,
// keyed by the definition the manager runs (the same *spec.Spec across its
// restarts of one source; a new one after DROP and CREATE or in another
// engine): the manager restarts failed runners, and a restart must report
// the same failure rather than retry into it.
var failed sync.Map

// runSource runs one attempt: the connector manager restarts it with
// backoff after an error, which the source's status shows.
func runSource(ctx context.Context, env *connectors.Env) error {
	s := env.Spec
	key := s
	if err, ok := failed.Load(key); ok {
		return err.(error)
	}
	cfg, names, err := configure(ctx, env)
	if err != nil {
		return err
	}
	target := NewEngineTarget(env.Engine, s.Name, cfg.Tables, names)
	target.report = func(n int) { env.Status.Report(int64(n), 0, nil) }
	r := NewRunner(cfg, target, func(state, detail string) {
		if state == StateStreaming {
			env.Status.Running()
		}
	})
	r.Lag = env.Status.SetLag
	_, err = r.RunOnce(ctx)
	if ctx.Err() != nil {
		return nil
	}
	var fatal *FatalError
	if errors.As(err, &fatal) {
		failed.Store(key, err)
	}
	return err
}

// configure reads the upstream tables, checks the RockStream tables
// against them and makes sure the publication exists.
func configure(ctx context.Context, env *connectors.Env) (Config, []string, error) {
	s := env.Spec
	cs := connString(s)
	conn, err := pgconn.Connect(ctx, cs)
	if err != nil {
		return Config{}, nil, fmt.Errorf("connecting to the upstream database: %w", err)
	}
	defer conn.Close(context.Background())
	schema := s.OptionDefault("upstream_schema", "public")
	publication := s.OptionDefault("publication", "rockstream_"+strings.ToLower(s.Name))
	names := append([]string(nil), s.Tables...)
	if s.Target != "" {
		names = append(names, s.Target)
	}
	var upstream []string
	for _, n := range names {
		upstream = append(upstream, schema+"."+n)
	}
	tables, err := Discover(ctx, conn, publication, upstream)
	if err != nil {
		return Config{}, nil, err
	}
	if s.AllTables {
		names = names[:0]
		for _, t := range tables {
			names = append(names, t.Name)
		}
	}
	if err := CheckTables(env.Engine, tables, names); err != nil {
		return Config{}, nil, err
	}
	if err := EnsurePublication(ctx, conn, publication, s.Name, tables); err != nil {
		return Config{}, nil, err
	}
	return Config{ConnString: cs, Slot: slot(s), Publication: publication, Tables: tables}, names, nil
}
