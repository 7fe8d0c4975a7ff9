package oracle

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// workloadStatementTimeoutMS bounds one PostgreSQL statement of a
// generated workload.
const workloadStatementTimeoutMS = 10000

// tooLarge reports whether a run ended because PostgreSQL hit the
// statement timeout (SQLSTATE 57014, query_canceled).
func tooLarge(fs []Finding, err error) bool {
	if err != nil && strings.Contains(err.Error(), "57014") {
		return true
	}
	return len(fs) > 0 && strings.Contains(fs[0].What, "57014")
}

var (
	casesFlag = flag.Int("oracle.cases", 200, "number of random workloads TestRandomViews checks")
	stepsFlag = flag.Int("oracle.steps", 30, "maximum number of changes in a random workload")
)

// commandLine records, before the tests change any flag, which flags
// the command line set.
var commandLine = sync.OnceValue(func() map[string]bool {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
})

// flagSet reports whether the named flag was given on the command line.
func flagSet(name string) bool { return commandLine()[name] }

// defaultSeed makes the default run (the one CI makes) check the same
// workloads every time, so that its verdict is reproducible; give
// -rapid.seed (0 draws one at random) and -oracle.cases to explore more.
const defaultSeed = "20261130"

// setRapidFlags sets the number of rapid checks, unless -rapid.checks is
// given, fixes the seed unless -rapid.seed is, and turns off rapid's fail
// files.
func setRapidFlags(checks int) {
	if !flagSet("rapid.checks") {
		flag.Set("rapid.checks", strconv.Itoa(checks))
	}
	if !flagSet("rapid.seed") {
		flag.Set("rapid.seed", defaultSeed)
	}
	if !flagSet("rapid.nofailfile") {
		// The seed and the printed script reproduce a failure; fail
		// files would only litter the source tree.
		flag.Set("rapid.nofailfile", "true")
	}
}

// TestRandomViews checks random workloads (see gen.go): after every
// statement, every view in RockStream must equal PostgreSQL's answer.
// -oracle.cases sets the number of workloads. A failure prints rapid's
// seed (-rapid.seed=N reproduces it) and a minimal failing script, which
// -oracle.scripts=FILE runs through TestScripts.
func TestRandomViews(t *testing.T) {
	checkRandomViews(t, func(workers int) (Engine, error) { return OpenRockStream(workers) })
}

// checkRandomViews is TestRandomViews against the engines newSUT opens.
// Each workload runs on one of TestWorkers' worker counts, drawn.
func checkRandomViews(t *testing.T, newSUTOn func(workers int) (Engine, error)) {
	dsn := pgtest.NewDatabase(t, "oracle")
	setRapidFlags(*casesFlag)
	var failing []Statement
	failingWorkers := 1
	defer func() {
		if failing == nil || !t.Failed() {
			return
		}
		newSUT := func() (Engine, error) { return newSUTOn(failingWorkers) }
		fails := func(stmts []Statement) bool {
			fs, err := runWorkload(dsn, stmts, newSUT)
			return (err != nil || len(fs) > 0) && !tooLarge(fs, err)
		}
		min := Minimize(failing, fails, time.Now().Add(2*time.Minute))
		fs, err := runWorkload(dsn, min, newSUT)
		what := fmt.Sprint(err)
		if len(fs) > 0 {
			what = fs[0].String()
		}
		t.Logf("minimal failing script (%d of %d statements, on %d workers); save it to a file and run\n"+
			"  go test ./internal/oracle -run 'TestScripts$' -oracle.scripts=FILE\n\n%s\nwhich fails with:\n%s",
			len(min), len(failing), failingWorkers, FormatScript(min), what)
	}()
	rapid.Check(t, func(rt *rapid.T) {
		w := WorkloadGen(*stepsFlag).Draw(rt, "workload")
		workers := rapid.SampledFrom(TestWorkers()).Draw(rt, "workers")
		fs, err := runWorkload(dsn, w.Statements, func() (Engine, error) { return newSUTOn(workers) })
		if err == nil && len(fs) == 0 {
			return
		}
		if tooLarge(fs, err) {
			rt.Skip("workload too large: PostgreSQL hit the statement timeout")
		}
		failing, failingWorkers = w.Statements, workers
		what := fmt.Sprint(err)
		if len(fs) > 0 {
			what = fs[0].String()
		}
		rt.Fatalf("script:\n%s\nfails:\n%s", FormatScript(w.Statements), what)
	})
}

// runWorkload runs stmts on a fresh engine from newSUT and on PostgreSQL
// in a fresh schema of the database at dsn, and returns the first finding
// or the error that ended the run.
func runWorkload(dsn string, stmts []Statement, newSUT func() (Engine, error)) ([]Finding, error) {
	// Number the statements as FormatScript prints them.
	stmts = append([]Statement(nil), stmts...)
	for i := range stmts {
		stmts[i].Line = i + 1
	}
	// A liveness bound, not a speed check: a workload takes seconds on an
	// idle machine, and a loaded one has exceeded two minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	ref, done, err := postgresInSchema(ctx, dsn, "postgres")
	if err != nil {
		return nil, err
	}
	defer done()
	sut, err := newSUT()
	if err != nil {
		return nil, err
	}
	defer sut.Close()
	r := &Runner{Ref: ref, SUT: sut, Source: "workload"}
	return r.Run(ctx, stmts, 1)
}

// postgresInSchema connects a Postgres engine confined to a new schema of
// the database at dsn; done closes it and drops the schema.
func postgresInSchema(ctx context.Context, dsn, name string) (p *Postgres, done func(), err error) {
	schema := fmt.Sprintf("w%d", schemaSeq.Add(1))
	admin, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		return nil, nil, err
	}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema).ReadAll(); err != nil {
		admin.Close(ctx)
		return nil, nil, err
	}
	// A generated view can be large; one that PostgreSQL cannot evaluate
	// in seconds makes the workload useless rather than wrong.
	p, err = ConnectPostgres(ctx, name, dsn+"&search_path="+schema+"&statement_timeout="+strconv.Itoa(workloadStatementTimeoutMS))
	if err != nil {
		admin.Close(ctx)
		return nil, nil, err
	}
	return p, func() {
		p.Close()
		bg := context.Background()
		admin.Exec(bg, "DROP SCHEMA "+schema+" CASCADE").ReadAll()
		admin.Close(bg)
	}, nil
}

// TestWorkloadsAreValid runs generated workloads with PostgreSQL on both
// sides: every generated statement must succeed in PostgreSQL (the
// generator promises valid SQL whose evaluation cannot fail), but for the
// key violations it marks, which must fail with 23505; and the harness
// must agree with itself. It checks a quarter of -oracle.cases.
func TestWorkloadsAreValid(t *testing.T) {
	dsn := pgtest.NewDatabase(t, "oracle")
	setRapidFlags(max(1, *casesFlag/4))
	rapid.Check(t, func(rt *rapid.T) {
		w := WorkloadGen(*stepsFlag).Draw(rt, "workload")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		ref, done, err := postgresInSchema(ctx, dsn, "postgres")
		if err != nil {
			rt.Fatal(err)
		}
		defer done()
		sut, done2, err := postgresInSchema(ctx, dsn, "postgres-b")
		if err != nil {
			rt.Fatal(err)
		}
		defer done2()
		r := &Runner{Ref: ref, SUT: sut, Source: "workload", Strict: true, SkipEngineOnly: true}
		fs, err := r.Run(ctx, w.Statements, 1)
		if tooLarge(fs, err) {
			rt.Skip("workload too large: PostgreSQL hit the statement timeout")
		}
		if err != nil || len(fs) > 0 {
			var b strings.Builder
			for _, f := range fs {
				b.WriteString(f.String())
			}
			rt.Fatalf("script:\n%s\nerror: %v\n%s", FormatScript(w.Statements), err, b.String())
		}
	})
}

// TestRandomViewsOverWire is TestRandomViews through the PostgreSQL wire
// gateway (pgx's pgconn on both sides), for a quarter of -oracle.cases.
func TestRandomViewsOverWire(t *testing.T) {
	cases := *casesFlag
	defer func() { *casesFlag = cases }()
	*casesFlag = max(1, cases/4)
	checkRandomViews(t, func(workers int) (Engine, error) { return OpenWire(context.Background(), workers) })
}
