package runtime

import (
	"context"
	"errors"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgcatalog"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/session"
	"github.com/rockstream/rockstream/internal/spill"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/sql/fastinsert"
	"github.com/rockstream/rockstream/internal/sql/pgparse"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Engine is one RockStream instance.
type Engine struct {
	opts Options

	// current is the committed store read as currentReader, and
	// readDone is mu.RUnlock: made once, not at each read (readView).
	current  state.Reader
	readDone func()

	// writeToken is held by whoever may write: the group committer while it
	// runs an epoch, or a transaction block from its first write to its end.
	writeToken chan struct{}
	// queue holds autocommit writes waiting for the group committer.
	queue chan *writeRequest
	// stop ends the group committer; stopped is closed when it has ended.
	stop, stopped chan struct{}
	// connStatus reports the status of sources and sinks (connector.go).
	connStatus atomic.Pointer[func(name string) (ConnectorStatus, bool)]
	// audit is the audit log, when the server keeps one (audit.go).
	audit atomic.Pointer[AuditLog]
	// progress holds the long operations under way (backfill.go).
	progress progressRegistry
	// checkpoints counts the online checkpoints (checkpoint.go).
	checkpoints checkpointStats
	// onPanic sees the panics recovered from statements (OnPanic).
	onPanic atomic.Pointer[func(recovered any, stack []byte)]
	// spill is where statements write what they spill (spillquery.go).
	spill *spill.Area

	// mu guards the committed state: readers hold it shared for the whole
	// read; a commit holds it exclusively while it applies an epoch.
	mu struct {
		sync.RWMutex
		store Store
		cat   *catalog
		epoch uint64
		// failed is set when a commit failed in a way that leaves the
		// store's state unknown; every later write fails with it.
		failed error
		// committed is closed (and replaced) when an epoch commits, so
		// that subscriptions wait for changes without polling.
		committed chan struct{}
		// closed is set once Close has closed the store.
		closed bool
	}

	// obs holds the engine's sessions and counters (stats.go).
	obs observer
	// cache holds small relations' contents for reads of the current
	// state (relcache.go).
	cache *relationCache
	// logs tells reads of the current state which buckets of a view's
	// change log hold recent entries (changeindex.go).
	logs *changeIndex
	// shard is the engine's part in a cluster, nil on one node (shard.go).
	shard *shardState
}

// Options tunes an engine.
type Options struct {
	// ChangeLogRetention is how many epochs of view changes are kept for
	// AS OF EPOCH reads and subscribers; 0 means DefaultChangeLogRetention.
	ChangeLogRetention uint64
	// MaxGroup bounds how many autocommit statements share one epoch; 0
	// means 256.
	MaxGroup int
	// Workers is how many workers step the circuits of an epoch and of an
	// ad-hoc query; 0 means the number of cores (GOMAXPROCS).
	Workers int
	// ParallelMinRows is the smallest input delta, in rows, that a step
	// splits between the workers; 0 means diff.DefaultMinRows.
	ParallelMinRows int
	// Clock gives the time now() and current_timestamp read at the start
	// of a transaction or statement; nil means time.Now. With a Clock,
	// the engine keeps no timer for the changes its temporal filters
	// schedule: the owner of the clock calls Tick after moving it.
	Clock func() time.Time
	// TempDir is the directory of the temporary files that queries
	// spill past work_mem (a durable store's <storage>/tmp), emptied when
	// the engine opens and closes; empty means a new directory of the
	// engine's own under TempParent (spillquery.go).
	TempDir string
	// TempParent is where that directory is made when TempDir is empty;
	// empty means os.TempDir().
	TempParent string
	// Shard, when set, runs the engine as one shard of a cluster
	// (shard.go): it keeps the rows of its buckets, and its circuits step
	// with the other shards' over the mesh. It implies MaxGroup 1 and
	// Workers 1.
	Shard *Shard
}

// DefaultChangeLogRetention is the change-log horizon in epochs.
const DefaultChangeLogRetention = 100_000

// OpenMemory returns an empty in-memory engine.
func OpenMemory() *Engine {
	e, err := Open(NewMemoryStore(), Options{})
	if err != nil {
		// An empty memory store holds nothing that can fail to load.
		panic(err)
	}
	return e
}

// Open starts an engine on store, recovering the catalog and the last
// committed epoch it holds. Views are not recomputed: their state is in
// the store.
func Open(store Store, opts Options) (*Engine, error) {
	if opts.ChangeLogRetention == 0 {
		opts.ChangeLogRetention = DefaultChangeLogRetention
	}
	if opts.MaxGroup <= 0 {
		opts.MaxGroup = 256
	}
	if opts.Workers <= 0 {
		opts.Workers = goruntime.GOMAXPROCS(0)
	}
	if opts.ParallelMinRows <= 0 {
		opts.ParallelMinRows = diff.DefaultMinRows
	}
	if opts.Shard != nil {
		if err := opts.Shard.check(); err != nil {
			return nil, err
		}
		// Every write statement an epoch of its own, every step on the
		// mesh from one goroutine.
		opts.MaxGroup, opts.Workers = 1, 1
	}
	e := &Engine{
		opts:       opts,
		writeToken: make(chan struct{}, 1),
		queue:      make(chan *writeRequest, 1024),
		stop:       make(chan struct{}),
		stopped:    make(chan struct{}),
		cache:      newRelationCache(),
		logs:       newChangeIndex(),
	}
	if opts.Shard != nil {
		e.shard = &shardState{Shard: *opts.Shard}
	}
	if _, err := checkLayout(store); err != nil {
		return nil, err
	}
	var err error
	if e.spill, err = openSpillArea(opts); err != nil {
		return nil, err
	}
	cat, epoch, err := recoverCatalog(store, opts.Shard != nil)
	if err != nil {
		return nil, err
	}
	if err := upgradeLayout(store, cat); err != nil {
		return nil, err
	}
	cat.statusOf = e.connectorStatus
	e.mu.store = store
	e.current, e.readDone = currentReader{store, e}, e.mu.RUnlock
	e.mu.cat = cat
	e.mu.epoch = epoch
	e.mu.committed = make(chan struct{})
	cat.eng = e
	e.obs.init(store, epoch)
	go e.runCommitter()
	if opts.Clock == nil {
		// An engine with a clock of its own is ticked by its owner.
		go e.runClockTimer()
	}
	return e, nil
}

// Close stops the engine after the writes in flight and closes its store.
// Sessions must not be used afterwards.
func (e *Engine) Close() error {
	close(e.stop)
	<-e.stopped
	e.writeToken <- struct{}{}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mu.closed = true
	// A clean shutdown writes out what is held in memory, so that the next
	// start-up has no log to replay.
	var ferr error
	if f, ok := e.mu.store.(interface{ Flush() error }); ok && e.mu.failed == nil {
		ferr = f.Flush()
	}
	return errors.Join(ferr, e.mu.store.Close(), e.spill.Close())
}

// Epoch returns the last committed epoch.
func (e *Engine) Epoch() uint64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.mu.epoch
}

// Column is one result column.
type Column struct {
	Name string
	Type types.Type
}

// Result is the outcome of one statement.
type Result struct {
	// Columns is nil for a statement that returns no rows.
	Columns []Column
	Rows    []zset.Row
	Tag     string

	// At most one of these is set, for statements that stream (stream.go).
	CopyIn       *CopyIn
	CopyOut      *CopyOut
	Subscription *Subscription
	// Stream, set only by ExecStreaming, holds the rows of a query sent
	// as they are produced (rowstream.go); Rows is then nil.
	Stream *RowStream

	// skipped is the NOTICE a DDL statement raises once it has succeeded
	// without doing anything (CREATE ... IF NOT EXISTS of a name that
	// exists); the session sends it (Session.ddl).
	skipped string
	// skippedCode is the SQLSTATE code of that NOTICE; "" means 42P07
	// (a relation exists).
	skippedCode errs.Code
	// note, when set, is a NOTICE (00000) a DDL statement raises once it
	// has succeeded (CREATE OR REPLACE MATERIALIZED VIEW says what it
	// kept); the session sends it (Session.ddl).
	note string
}

// Session is one client's sequence of statements.
type Session struct {
	eng *Engine
	txn *txn // nil outside a transaction block
	// rawSetting is set while set_config runs: its value is taken as
	// written (setconfig.go).
	rawSetting bool
	// statementStart is when the running statement began (clock.go).
	statementStart time.Time
	// fixed is set while the running statement carries the values its
	// caller fixed (StatementValues).
	fixed bool
	// seed is the running statement's fixed random seed, when fixed.
	seed uint64
	// random is the session's generator of random() and setseed().
	random types.Random
	// inMessage is set while the statements of a Query message of
	// several statements run: a statement outside a transaction block
	// then opens the message's implicit block (implicit.go).
	inMessage bool
	// cursors are the open cursors, by name; all belong to the open
	// transaction block and are closed when it ends.
	cursors session.Cursors[*cursor]
	// settings holds the values SET in this session; others have their
	// defaults.
	settings session.Settings
	// res holds the settings each execution reads, resolved at a
	// version of settings (resolved.go).
	res resolvedSettings
	// path is the search path last resolved for a catalog (resolved.go).
	path pathMemo
	// declared holds the parameters of the prepared statement being run
	// (prepare.go): their types and values; nil otherwise.
	declared *statementParams
	// sqlPrepared holds the statements of SQL PREPARE (sqlprepare.go).
	sqlPrepared session.Prepared[*Prepared]
	// onNotice receives the session's notices; nil discards them.
	onNotice func(Notice)
	// act is the session's entry in the engine's registry (sessions.go).
	act *activity
	// roles is the session's memo of its role's privileges as committed
	// (privmemo.go); nil until a check read them.
	roles *roleMemo
	// pid is backendPID's number with bit 30 set, 0 until it is computed.
	pid int32
	// info is what sessionInfo last returned, kept while the user, role
	// and database it shows stay the same; nil before the first.
	info *pgcatalog.Session
	// lastCommit is the epoch the session's last commit is visible at
	// (freshness.go); 0 before its first commit.
	lastCommit uint64
}

// txn is an open transaction block (or the implicit transaction of one
// statement): its state as the session sees it (session.Txn; the
// implicit block of a Query message ends with the message, implicit.go)
// and what it wrote.
type txn struct {
	session.Txn
	// w holds a block's writes; nil until its first write that cannot be
	// deferred, when the write token is taken.
	w *epochWrite
	// deferred holds the rows of the block's INSERTs while it does not
	// hold the write token (deferred.go).
	deferred *deferredWrites
	// savepoints are the block's savepoints, oldest first (savepoint.go).
	savepoints session.Savepoints[*savepoint]
	// started is when the transaction began: what now() reads in it.
	started time.Time
	// visibleAt is the latest epoch holding the transaction's writes
	// through the group committer (autocommit statements); 0 when none.
	visibleAt uint64
}

// wrote reports whether the block has written anything.
func (t *txn) wrote() bool { return t != nil && (t.w != nil || t.deferred != nil) }

// stateOK reports whether statements may run: outside a block, or in one
// that has not failed.
func (t *txn) stateOK() bool { return t == nil || !t.Failed() }

// explicit reports whether t is a block opened by BEGIN.
func (t *txn) explicit() bool { return t != nil && t.Explicit() }

// NewSession returns a session of e.
func (e *Engine) NewSession() *Session { return &Session{eng: e, act: e.obs.sessions.register()} }

// Close ends the session, rolling back an open transaction.
func (s *Session) Close() {
	if s.txn != nil {
		s.rollback()
	}
	s.closeCursors()
	s.eng.obs.sessions.unregister(s.act)
}

// InTransaction reports whether a transaction block is open.
func (s *Session) InTransaction() bool { return s.txn.explicit() }

// Exec parses and runs one statement. params are the values of $1...;
// paramText, when not nil, supplies them as text to be parsed once their
// types are inferred.
//
// When ctx ends the statement stops soon after, wherever it is (waiting
// for the write token or the group committer, or evaluating), and fails
// with SQLSTATE 57014: ErrStatementTimeout past a deadline,
// ErrCanceledByUser otherwise, or the *errs.Error given as ctx's cause.
// A write it stopped leaves nothing behind; see the package doc. The
// session's statement_timeout, when set, is a deadline of its own (the
// gateway sets the same one), so embedded sessions honour it too.
func (s *Session) Exec(ctx context.Context, query string, paramText []*string) (*Result, error) {
	return s.ExecStatement(ctx, ParseStatement(query), paramText)
}

// ExecStatement runs a parsed statement, as Exec does. A statement that
// fails inside a transaction block, explicit or implicit, fails the
// block, whatever the error, as in PostgreSQL. A panic while the
// statement runs is its error (XX000), not the process's end.
func (s *Session) ExecStatement(ctx context.Context, st *Statement, paramText []*string) (res *Result, err error) {
	done := s.beginStatement(st.Text)
	defer func() { done(res, err) }()
	s.startStatement(ctx)
	ctx, acct := s.openAccount(ctx)
	defer acct.Close()
	ctx, scratch := s.openScratch(ctx)
	defer scratch.Close()
	if d := s.StatementTimeout(); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, ErrStatementTimeout)
		defer cancel()
	}
	res, err = guard(s.eng, func() (*Result, error) { return s.exec(ctx, st, paramText) })
	if err != nil {
		s.FailTransaction()
	}
	return res, statementError(ctx, err)
}

func (s *Session) exec(ctx context.Context, parsed *Statement, paramText []*string) (*Result, error) {
	if err := parsed.SyntaxError(); err != nil {
		// PostgreSQL parses before it looks at the transaction's state.
		return nil, err
	}
	if st := parsed.ext; st.Kind != ext.None {
		if s.txn != nil && s.txn.Failed() {
			return nil, errs.New(errs.InFailedTransaction, "current transaction is aborted, commands ignored until end of transaction block")
		}
		if st.Err != nil {
			return nil, st.Err
		}
		if err := s.checkExt(st); err != nil {
			return nil, err
		}
		switch st.Kind {
		case ext.AsOfEpoch:
			if err := s.awaitMinEpoch(ctx); err != nil {
				return nil, err
			}
			return s.execSelectAsOf(ctx, st.Query, st.Epoch, paramText)
		case ext.Subscribe:
			return s.statement(ctx, func() (*Result, error) { return s.execSubscribe(st) })
		case ext.CopyTo:
			return s.statement(ctx, func() (*Result, error) { return s.execCopyExt(ctx, st, paramText) })
		case ext.DeclareCursor:
			return s.statement(ctx, func() (*Result, error) { return s.declareExt(ctx, st, paramText) })
		case ext.Fetch:
			return s.statement(ctx, func() (*Result, error) { return s.fetchExt(ctx, st) })
		case ext.CreateConnector, ext.AlterConnector, ext.DropConnector, ext.ShowConnectors:
			return s.statement(ctx, func() (*Result, error) { return s.execConnector(ctx, st) })
		case ext.Checkpoint:
			return s.execCheckpoint(ctx, st)
		}
		return s.explainIncremental(ctx, st)
	}
	tree := parsed.tree
	if len(tree.Stmts) == 0 {
		return &Result{Tag: ""}, nil
	}
	if len(tree.Stmts) > 1 {
		return nil, errs.New(errs.SyntaxError, "cannot run several statements at once here; split them first")
	}
	raw := tree.Stmts[0]
	if res, ok, err := s.preparedStatement(ctx, tree.Version, raw.Stmt); ok {
		return res, err
	}
	return s.execNode(ctx, parsed.Text, raw.Stmt, paramText)
}

// testHookDispatch, when set (by tests), is called with each statement
// about to be dispatched, in the session running it.
var testHookDispatch func(s *Session, text string)

// parse parses a statement's text, an INSERT of literal rows without
// PostgreSQL's parser (which returns the same tree, only slower).
func parse(query string) (*pg.ParseResult, error) {
	if tree, ok := fastinsert.Parse(query); ok {
		return tree, nil
	}
	text, appendOnly := ext.AppendOnly(query)
	text, orReplace := ext.OrReplaceMatView(text)
	tree, err := pgparse.Parse(text)
	if err == nil && orReplace && len(tree.Stmts) == 1 {
		markReplace(tree.Stmts[0].Stmt)
	}
	if err == nil && appendOnly && len(tree.Stmts) == 1 {
		// CREATE TABLE ... APPEND ONLY is WITH (append_only) spelt as
		// RisingWave spells it.
		if cs := tree.Stmts[0].Stmt.GetCreateStmt(); cs != nil {
			cs.Options = append(cs.Options, pg.MakeSimpleDefElemNode("append_only", nil, 0))
		}
	}
	return tree, err
}

func parseError(err error) error {
	var re *errs.Error
	if errors.As(err, &re) {
		return err // refused before parsing (pgparse: too deep)
	}
	var pe *pgparser.Error
	if errors.As(err, &pe) {
		return &errs.Error{Code: errs.SyntaxError, SQLState: "42601", Message: pe.Message, Position: pe.Cursorpos}
	}
	return errs.New(errs.SyntaxError, err.Error())
}

func (s *Session) execNode(ctx context.Context, text string, n *pg.Node, paramText []*string) (*Result, error) {
	switch {
	case n.GetTransactionStmt() != nil:
		return s.execTransaction(ctx, n.GetTransactionStmt())
	case n.GetVariableSetStmt() != nil && s.txn.stateOK():
		s.beginImplicitBlock()
		return s.execSet(n.GetVariableSetStmt())
	case n.GetVariableShowStmt() != nil && s.txn.stateOK():
		return s.execShow(n.GetVariableShowStmt())
	}
	return s.statement(ctx, func() (*Result, error) { return s.dispatch(ctx, text, n, paramText) })
}

// statement runs one statement in the open transaction block, or in an
// implicit transaction of its own outside one (in the implicit block of
// its Query message when the message has several statements): a failure
// marks the block failed, or rolls the implicit transaction back.
func (s *Session) statement(ctx context.Context, run func() (*Result, error)) (*Result, error) {
	if s.txn != nil && s.txn.Failed() {
		return nil, errs.New(errs.InFailedTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	if err := s.awaitMinEpoch(ctx); err != nil {
		return nil, err
	}
	s.beginImplicitBlock()
	autocommit := s.txn == nil
	if autocommit {
		s.txn = s.newTxn(false)
	}
	s.txn.Queried()
	res, err := guard(s.eng, run)
	if autocommit {
		if err == nil {
			err = s.commit(ctx)
		} else {
			s.rollback()
		}
		s.txn = nil
	} else if err != nil {
		s.txn.Fail()
	}
	return res, err
}

func (s *Session) execTransaction(ctx context.Context, t *pg.TransactionStmt) (*Result, error) {
	s.beginImplicitBlock()
	switch t.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
		tag := "BEGIN"
		if t.Kind == pg.TransactionStmtKind_TRANS_STMT_START {
			tag = "START TRANSACTION"
		}
		switch {
		case s.txn == nil:
			s.txn = s.newTxn(true)
		case s.txn.Implicit():
			// The statements of the message before BEGIN join the block.
			s.txn.BeginExplicit()
		default:
			// Inside a block PostgreSQL warns and carries on.
			s.notice("WARNING", errs.ActiveTransaction, "there is already a transaction in progress")
			return &Result{Tag: tag}, nil
		}
		if err := s.transactionModes(t.Options); err != nil {
			return nil, err
		}
		return &Result{Tag: tag}, nil
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT:
		if !s.txn.explicit() {
			s.notice("WARNING", errs.NoActiveTransaction, "there is no transaction in progress")
		}
		if s.txn == nil {
			return &Result{Tag: "COMMIT"}, nil
		}
		if s.txn.Failed() {
			s.rollback()
			s.txn = nil
			return &Result{Tag: "ROLLBACK"}, nil
		}
		err := s.commit(ctx)
		s.txn = nil
		if err != nil {
			return nil, err
		}
		return &Result{Tag: "COMMIT"}, nil
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		if !s.txn.explicit() {
			s.notice("WARNING", errs.NoActiveTransaction, "there is no transaction in progress")
		}
		if s.txn != nil {
			s.rollback()
			s.txn = nil
		}
		return &Result{Tag: "ROLLBACK"}, nil
	case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT, pg.TransactionStmtKind_TRANS_STMT_RELEASE,
		pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		if !s.txn.explicit() {
			// As in PostgreSQL, also in the implicit block of a message:
			// an error there rolls the whole message back, so a savepoint
			// could never be returned to.
			return nil, errs.Newf(errs.NoActiveTransaction, "%s can only be used in transaction blocks", transactionKindName(t.Kind))
		}
		switch t.Kind {
		case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
			if err := s.rollbackTo(t.SavepointName); err != nil {
				return nil, err
			}
			return &Result{Tag: "ROLLBACK"}, nil
		case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
			if err := s.CheckNotFailed(); err != nil {
				return nil, err
			}
			if err := s.setSavepoint(ctx, t.SavepointName); err != nil {
				return nil, err
			}
			return &Result{Tag: "SAVEPOINT"}, nil
		default:
			if err := s.CheckNotFailed(); err != nil {
				return nil, err
			}
			if err := s.release(t.SavepointName); err != nil {
				return nil, err
			}
			return &Result{Tag: "RELEASE"}, nil
		}
	}
	return nil, errs.Newf(errs.FeatureNotSupported, "%s is not supported", transactionKindName(t.Kind))
}

func transactionKindName(k pg.TransactionStmtKind) string {
	switch k {
	case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
		return "SAVEPOINT"
	case pg.TransactionStmtKind_TRANS_STMT_RELEASE:
		return "RELEASE SAVEPOINT"
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return "ROLLBACK TO SAVEPOINT"
	case pg.TransactionStmtKind_TRANS_STMT_PREPARE, pg.TransactionStmtKind_TRANS_STMT_COMMIT_PREPARED,
		pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_PREPARED:
		return "two-phase commit"
	}
	return "this transaction statement"
}

// commit ends the session's transaction block, committing its writes as
// one epoch.
func (s *Session) commit(ctx context.Context) (err error) {
	defer func() { s.endSettings(err == nil) }()
	s.closeCursors()
	if err := s.foldSavepoints(0); err != nil {
		s.rollback()
		return err
	}
	s.txn.savepoints = nil
	w := s.txn.w
	if d := s.txn.deferred; d != nil {
		s.txn.deferred = nil
		at, err := s.commitDeferred(ctx, d)
		if err == nil {
			s.noteCommit(at)
		}
		return err
	}
	if w == nil {
		s.noteCommit(s.visibleEpoch())
		return nil
	}
	s.txn.w = nil
	defer func() { <-s.eng.writeToken }()
	if err := w.flush(ctx); err != nil {
		w.ov.Discard()
		return err
	}
	if err := s.eng.commitEpoch(w); err != nil {
		return err
	}
	// The block still holds the write token: the frontier is its epoch,
	// or the one it found when it changed nothing.
	s.noteCommit(s.eng.obs.epoch.Load())
	return nil
}

func (s *Session) rollback() {
	s.endSettings(false)
	s.closeCursors()
	s.txn.deferred = nil
	s.txn.savepoints = nil
	if s.txn.w == nil {
		return
	}
	s.txn.w.ov.Discard()
	s.txn.w = nil
	<-s.eng.writeToken
}

// readView returns the store and catalog a read in this session sees: the
// transaction's own writes when it has any, else the committed state, and
// a function to call when the read is done.
//
// Inside a transaction block that has written, the block's changes are
// first carried through its materialized views, so that the read sees
// them; a view whose query fails on the block's current state fails the
// read, as reading a view does in PostgreSQL.
func (s *Session) readView(ctx context.Context) (state.Reader, *catalog, func(), error) {
	if s.txn.wrote() {
		if s.txn.w == nil {
			if err := s.takeWriteToken(ctx); err != nil {
				return nil, nil, nil, err
			}
		}
		if err := s.txn.w.flush(ctx); err != nil {
			return nil, nil, nil, err
		}
		return s.txn.w.ov, s.txn.w.cat, func() {}, nil
	}
	s.eng.mu.RLock()
	return s.eng.current, s.eng.mu.cat, s.eng.readDone, nil
}

// writeStatement runs fn, a statement's writes, in a statement overlay
// whose writes are kept only when fn succeeds. Inside a transaction block
// the overlay sits over the block's epoch, and the block's changes reach
// its materialized views at COMMIT (or before a read of them: readsViews
// says the statement reads relations); outside one, the statement goes to
// the group committer and shares an epoch with other sessions'
// statements, and writeStatement returns when that epoch is durable.
func (s *Session) writeStatement(ctx context.Context, fn writeFunc, readsViews bool) error {
	fn = s.withSearchPath(fn)
	if s.txn.Block() && s.eng.shard != nil {
		return errBlockWriteInShard
	}
	if !s.txn.Block() {
		at, err := s.eng.submitAt(ctx, fn)
		if err == nil {
			s.txn.noteWrite(at)
		}
		return err
	}
	if s.txn.w == nil {
		if err := s.takeWriteToken(ctx); err != nil {
			return err
		}
	}
	if readsViews {
		if err := s.txn.w.flush(ctx); err != nil {
			return err
		}
	}
	return s.txn.w.run(fn)
}

func (s *Session) dispatch(ctx context.Context, text string, n *pg.Node, paramText []*string) (*Result, error) {
	if testHookDispatch != nil {
		testHookDispatch(s, text)
	}
	if s.txn.readOnlyTxn() {
		if name := writeStmtName(n); name != "" {
			return nil, s.readOnlyError(n, name, paramText)
		}
	}
	if err := s.checkStatement(n); err != nil {
		return nil, err
	}
	if res, ok, err := s.execPrivilegeStmt(ctx, n); ok {
		return res, err
	}
	if res, ok, err := s.execSchemaStmt(ctx, n); ok {
		return res, err
	}
	switch {
	case n.GetCopyStmt() != nil:
		return s.execCopy(ctx, n.GetCopyStmt(), paramText)
	case n.GetDeclareCursorStmt() != nil:
		return s.execDeclare(ctx, n.GetDeclareCursorStmt(), paramText)
	case n.GetFetchStmt() != nil:
		return s.execFetch(ctx, n.GetFetchStmt(), 0, false)
	case n.GetClosePortalStmt() != nil:
		return s.execClose(n.GetClosePortalStmt())
	case n.GetSelectStmt() != nil:
		return s.execSelect(ctx, n, paramText)
	case n.GetInsertStmt() != nil:
		return s.execInsert(ctx, n.GetInsertStmt(), paramText)
	case n.GetUpdateStmt() != nil:
		return s.execUpdate(ctx, n.GetUpdateStmt(), paramText)
	case n.GetDeleteStmt() != nil:
		return s.execDelete(ctx, n.GetDeleteStmt(), paramText)
	case n.GetTruncateStmt() != nil:
		return s.execTruncate(ctx, n.GetTruncateStmt())
	case n.GetCreateStmt() != nil:
		if tableColumns(n.GetCreateStmt()) > sql.MaxTableColumns {
			return nil, sql.TooManyTableColumns()
		}
		return s.ddl(ctx, func(st state.Store, w *epochWrite) (*catalog, *Result, error) {
			return createTableConstrained(st, w.cat, text, n.GetCreateStmt())
		})
	case n.GetCreateTableAsStmt() != nil && n.GetCreateTableAsStmt().Objtype == pg.ObjectType_OBJECT_TABLE:
		return s.execCreateTableAs(ctx, n.GetCreateTableAsStmt())
	case n.GetCreateTableAsStmt() != nil:
		replace := hasReplace(n.GetCreateTableAsStmt())
		return s.ddl(ctx, func(st state.Store, w *epochWrite) (*catalog, *Result, error) {
			if replace {
				nc, res, err := replaceMatView(s.withProgress(ctx), st, w, text, n.GetCreateTableAsStmt(), s.recursionLimit(), s.Zone())
				if err == nil && nc != nil {
					err = reindexChanged(s.withProgress(ctx), st, w.cat, nc)
				}
				return nc, res, err
			}
			return createMatView(s.withProgress(ctx), st, w, text, n.GetCreateTableAsStmt(), false, s.recursionLimit(), s.Zone())
		})
	case n.GetViewStmt() != nil:
		return s.ddl(ctx, func(st state.Store, w *epochWrite) (*catalog, *Result, error) {
			return createOrReplaceView(s.withProgress(ctx), st, w, text, n.GetViewStmt())
		})
	case n.GetAlterTableStmt() != nil, n.GetRenameStmt() != nil,
		n.GetAlterObjectSchemaStmt() != nil && isRelationSetSchema(n.GetAlterObjectSchemaStmt()):
		return s.execAlter(ctx, text, n)
	case n.GetIndexStmt() != nil:
		return s.ddl(ctx, func(st state.Store, w *epochWrite) (*catalog, *Result, error) {
			return createIndex(s.withProgress(ctx), st, w.cat, n.GetIndexStmt(), false)
		})
	case n.GetDropStmt() != nil && n.GetDropStmt().RemoveType == pg.ObjectType_OBJECT_INDEX:
		return s.ddl(ctx, func(st state.Store, w *epochWrite) (*catalog, *Result, error) {
			return dropIndexStmt(st, w.cat, n.GetDropStmt())
		})
	case n.GetDropStmt() != nil:
		return s.ddl(ctx, func(st state.Store, w *epochWrite) (*catalog, *Result, error) {
			return drop(st, w.cat, n.GetDropStmt())
		})
	case n.GetCreateFunctionStmt() != nil:
		return s.ddl(ctx, func(st state.Store, w *epochWrite) (*catalog, *Result, error) {
			return createFunction(w.cat, text, n.GetCreateFunctionStmt())
		})
	case n.GetAlterObjectSchemaStmt() != nil:
		return s.ddl(ctx, func(st state.Store, w *epochWrite) (*catalog, *Result, error) {
			return alterObjectSchema(w.cat, n.GetAlterObjectSchemaStmt())
		})
	case n.GetCommentStmt() != nil:
		return s.execComment(ctx, n.GetCommentStmt())
	case n.GetExplainStmt() != nil:
		return s.explainPlain(ctx, n.GetExplainStmt(), paramText)
	case n.GetCreateRoleStmt() != nil, n.GetAlterRoleStmt() != nil, n.GetDropRoleStmt() != nil:
		return s.execRole(ctx, n)
	case n.GetAlterRoleSetStmt() != nil, n.GetAlterDatabaseSetStmt() != nil:
		return s.execRoleSetting(ctx, n)
	}
	return nil, errs.Newf(errs.FeatureNotSupported, "%s is not supported", stmtName(n))
}

// ddl runs a catalog change: in its own transaction, or in the epoch of
// the transaction block it is part of, committed or rolled back with the
// block's other changes. The catalog the block's later statements see is
// the changed one; other sessions see the change once the block commits.
func (s *Session) ddl(ctx context.Context, fn func(st state.Store, w *epochWrite) (*catalog, *Result, error)) (*Result, error) {
	opID := s.Setting("rockstream.operation_id")
	s.settings.Reset("rockstream.operation_id")
	var res *Result
	err := s.writeStatement(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
		if opID != "" {
			if tag, done, err := operationDone(st, opID); err != nil || done {
				res = &Result{Tag: tag}
				return nil, err
			}
		}
		c, r, err := fn(st, w)
		if err == nil && c != nil {
			err = persistCatalog(st, w.cat, c)
		}
		if err == nil && c != nil {
			err = s.recordOwners(st, w.cat, c)
		}
		if err == nil && opID != "" {
			err = recordOperation(st, opID, r.Tag)
		}
		res = r
		return c, err
	}, catalogChangeFlushes)
	if err == nil && res != nil && res.skipped != "" {
		code := res.skippedCode
		if code == "" {
			code = errs.DuplicateTable
		}
		s.notice("NOTICE", code, res.skipped)
	}
	if err == nil && res != nil && res.note != "" {
		s.notice("NOTICE", "00000", res.note)
	}
	return res, err
}

// catalogChangeFlushes makes a transaction block's pending table changes
// reach its materialized views before a catalog change: a view created in
// the block starts from its inputs' contents, which already hold the
// block's changes, and a relation dropped in the block takes its pending
// changes with it.
const catalogChangeFlushes = true

// outColumns converts plan columns to result columns.
func outColumns(cols []plan.Column) []Column {
	out := make([]Column, len(cols))
	for i, c := range cols {
		out[i] = Column{Name: c.Name, Type: c.Type}
	}
	return out
}

// errPosition returns err's statement position and the *errs.Error
// carrying it, or 0.
func errPosition(err error, e **errs.Error) int {
	if errors.As(err, e) {
		return (*e).Position
	}
	return 0
}

// tableColumns counts the columns a CREATE TABLE defines.
func tableColumns(cs *pg.CreateStmt) int {
	n := 0
	for _, elt := range cs.TableElts {
		if elt.GetColumnDef() != nil {
			n++
		}
	}
	return n
}
