package runtime

import (
	"context"
	"hash/fnv"
	"time"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/zset"
)

// A statement's fixed values (docs/cluster.md, "Writes are deterministic
// statements in the input log"). The members of a cluster run the same
// statements, and each computes the statement's rows itself: an INSERT
// hands every member the whole batch, and each keeps the rows of its
// buckets. A value that depends on where or when it is computed would
// differ between members, and with it a row's bucket where the value is
// part of the routing key (a table without a primary key routes by the
// whole row): the row would be kept twice, or nowhere. So the caller,
// the cluster's gateway, fixes those values once and gives them with the
// statement (WithStatementValues), and every member evaluates with them:
//
//   - now(), current_timestamp, transaction_timestamp(),
//     statement_timestamp(), localtimestamp, localtime, current_time and
//     current_date, and the column defaults that call them, read
//     StatementValues.Timestamp (a statement of its own is its
//     transaction in shard mode, so both times are one). An
//     Engine.Ingest fills no default in shard mode (it takes plain
//     inserts only), so it reads no clock there.
//   - random() draws from the session's generator seeded with
//     StatementValues.Seed at the statement's start: every member draws
//     the same numbers in the same order for an INSERT's rows, which
//     every member evaluates whole. (setseed(x) in the statement seeds it
//     again, on every member alike.)
//
// In shard mode a statement without fixed values that calls any of them
// is refused with 0A000 naming the function (sql.Clock.Unfixed).
// Invariants of the others, which need no fixed value:
//
//   - clock_timestamp(), timeofday(), gen_random_uuid(), nextval() and
//     the other volatile functions are refused everywhere, on one node
//     too (sql's volatileFunctions); RockStream has no sequences, hence
//     no serial columns, and a column default cannot call random().
//   - An UPDATE evaluates its SET list once for each of its rows, on the
//     member that owns the row, and sends the new row to its bucket's
//     owner: every row exists exactly once whatever it draws. With fixed
//     values, a SET list that draws random() draws, for each row, from
//     the generator seeded with the seed and the row's stored key
//     (updatedRowsAt), one row after the other: the new row is the same
//     on whichever member owns the old one, and on one node. A WHERE
//     that draws random() draws on each member for its own rows in its
//     own order: which rows it picks is the members' own (any pick is
//     one random() may make); the rows still exist exactly once. So does
//     the SET of INSERT ... ON CONFLICT DO UPDATE, evaluated on the
//     owner of the conflicting key.
//
// Outside shard mode the values are used too when given, which is how a
// single node reproduces a cluster's statement.

// StatementValues are the values of a statement its caller fixes.
type StatementValues struct {
	// Timestamp is the time of the statement and its transaction. The
	// zero time fixes nothing.
	Timestamp time.Time
	// Seed seeds random() at the statement's start.
	Seed uint64
}

type statementValuesKey struct{}

// WithStatementValues returns ctx carrying v: a statement run with it
// (Session.Exec, ExecStatement, ExecPrepared) evaluates with v's values.
func WithStatementValues(ctx context.Context, v StatementValues) context.Context {
	return context.WithValue(ctx, statementValuesKey{}, v)
}

// statementValuesOf returns the values ctx carries; ok is false when it
// fixes none.
func statementValuesOf(ctx context.Context) (StatementValues, bool) {
	v, ok := ctx.Value(statementValuesKey{}).(StatementValues)
	return v, ok && !v.Timestamp.IsZero()
}

// startStatement sets the running statement's time, and seeds random()
// where the caller fixed the statement's values.
func (s *Session) startStatement(ctx context.Context) {
	v, ok := statementValuesOf(ctx)
	s.fixed = ok
	if !ok {
		s.statementStart = s.eng.now()
		return
	}
	s.statementStart, s.seed = v.Timestamp, v.Seed
	s.random.Seed(v.Seed)
}

// updatedRowsAt is updatedRows for the running statement: when it has
// fixed values and its expressions draw random(), each row draws from
// the generator seeded with the statement's seed and the row's stored
// key, one row after the other, so that a row's new value is the same
// on whichever member owns it, and on one node.
func (s *Session) updatedRowsAt(ctx context.Context, o *object, sets setList, matched zset.Batch, draws bool, par diff.Parallelism) ([]zset.Row, error) {
	if !s.fixed || !draws {
		return updatedRows(ctx, o, sets, matched, par)
	}
	keyOf, prefix := o.keyOf(), o.rowsPrefix()
	out := make([]zset.Row, len(matched))
	var key []byte
	for i, e := range matched {
		if err := ops.Interrupted(ctx, i); err != nil {
			return nil, err
		}
		key = keyOf(key[:0], prefix, e.Row)
		h := fnv.New64a()
		h.Write(key)
		s.random.Seed(s.seed ^ h.Sum64())
		nr, err := applySets(o, sets, e.Row)
		if err != nil {
			return nil, err
		}
		out[i] = nr
	}
	return out, nil
}

// unfixedInShard is why a shard refuses a statement's function of the
// clock or random() without fixed values.
const unfixedInShard = "in shard mode every shard must compute the same value, and the statement carries no fixed timestamp and random seed (the values a gateway gives with the statement)"

// unfixed is the running statement's sql.Clock.Unfixed: empty but in
// shard mode without fixed values.
func (s *Session) unfixed() string {
	if s.eng.shard == nil || s.fixed {
		return ""
	}
	return unfixedInShard
}
