package lake

import (
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// maxCopyBytes bounds one COPY ... FROM STDIN stream held in memory.
const maxCopyBytes = 256 << 20

// session is one client connection: the protocol state machine over
// pgproto3, the transaction state and the prepared statements. A panic
// in a handler ends only this session's statement with XX000.
type session struct {
	srv *Server
	nc  net.Conn
	be  *pgproto3.Backend

	// tx is the open transaction, nil between transactions. explicit says
	// it began with BEGIN; failed that an error aborted it.
	tx       *txn
	explicit bool
	failed   bool

	stmts   map[string]*Statement
	portals map[string]*portal
	// skipToSync is set after an error in the extended protocol.
	skipToSync bool
	// tls says the connection was upgraded.
	tls bool

	// pid and secret are its BackendKeyData; intr its cancel state.
	pid    uint32
	secret []byte
	intr   interrupt
}

type portal struct {
	st      *Statement
	formats []int16
}

func (s *session) serve() error {
	if started, err := s.startup(); err != nil || !started {
		return err
	}
	for {
		msg, err := s.be.Receive()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return err
		}
		if _, ok := msg.(*pgproto3.Terminate); ok {
			return nil
		}
		s.intr.arm()
		err = s.handle(msg)
		s.intr.disarm()
		if err != nil {
			return err
		}
	}
}

// startup runs the startup phase; started says a session began (a
// cancel request ends the connection instead).
func (s *session) startup() (started bool, err error) {
	for {
		msg, err := s.be.ReceiveStartupMessage()
		if err != nil {
			return false, err
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if s.srv.cfg.TLS == nil || s.tls {
				if _, err := s.nc.Write([]byte{'N'}); err != nil {
					return false, err
				}
				continue
			}
			if _, err := s.nc.Write([]byte{'S'}); err != nil {
				return false, err
			}
			tc := tls.Server(s.nc, s.srv.cfg.TLS)
			if err := tc.Handshake(); err != nil {
				return false, err
			}
			s.nc, s.tls = tc, true
			s.be = pgproto3.NewBackend(tc, tc)
		case *pgproto3.GSSEncRequest:
			if _, err := s.nc.Write([]byte{'N'}); err != nil {
				return false, err
			}
		case *pgproto3.CancelRequest:
			s.srv.cancel(m)
			return false, nil
		case *pgproto3.StartupMessage:
			return true, s.start(m)
		default:
			return false, fmt.Errorf("lake: unexpected startup message %T", msg)
		}
	}
}

func (s *session) start(m *pgproto3.StartupMessage) error {
	user := m.Parameters["user"]
	if err := s.authenticate(user); err != nil {
		return err
	}
	s.be.Send(&pgproto3.AuthenticationOk{})
	params := [][2]string{
		{"application_name", m.Parameters["application_name"]},
		{"client_encoding", "UTF8"},
		{"DateStyle", "ISO, MDY"},
		{"default_transaction_read_only", "off"},
		{"in_hot_standby", "off"},
		{"integer_datetimes", "on"},
		{"IntervalStyle", "postgres"},
		{"is_superuser", "on"},
		{"server_encoding", "UTF8"},
		{"server_version", "15.18 (RockLake)"},
		{"session_authorization", user},
		{"standard_conforming_strings", "on"},
		{"TimeZone", "Etc/UTC"},
	}
	for _, p := range params {
		s.be.Send(&pgproto3.ParameterStatus{Name: p[0], Value: p[1]})
	}
	s.pid, s.secret = s.srv.nextPID(), make([]byte, 4)
	_, _ = rand.Read(s.secret)
	s.srv.register(s)
	s.be.Send(&pgproto3.BackendKeyData{ProcessID: s.pid, SecretKey: s.secret})
	return s.readyForQuery()
}

func (s *session) status() byte {
	switch {
	case s.failed:
		return 'E'
	case s.explicit:
		return 'T'
	}
	return 'I'
}

func (s *session) readyForQuery() error {
	s.be.Send(&pgproto3.ReadyForQuery{TxStatus: s.status()})
	return s.be.Flush()
}

func (s *session) sendError(err error) {
	se := asSQLError(err)
	s.be.Send(&pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: se.code,
		Message: se.msg, Detail: se.detail})
}

func (s *session) handle(msg pgproto3.FrontendMessage) error {
	if s.skipToSync {
		if _, ok := msg.(*pgproto3.Sync); !ok {
			return nil
		}
	}
	switch m := msg.(type) {
	case *pgproto3.Query:
		return s.simpleQuery(m.String)
	case *pgproto3.Parse:
		return s.extended(s.parse(m))
	case *pgproto3.Bind:
		return s.extended(s.bind(m))
	case *pgproto3.Describe:
		return s.extended(s.describe(m))
	case *pgproto3.Execute:
		return s.extended(s.execute(m))
	case *pgproto3.Close:
		if m.ObjectType == 'S' {
			delete(s.stmts, m.Name)
		} else {
			delete(s.portals, m.Name)
		}
		s.be.Send(&pgproto3.CloseComplete{})
		return nil
	case *pgproto3.Sync:
		s.skipToSync = false
		if !s.explicit && s.tx != nil {
			if err := s.commitImplicit(); err != nil {
				s.sendError(err)
			}
		}
		return s.readyForQuery()
	case *pgproto3.Flush:
		return s.be.Flush()
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		// Left over from a COPY that already failed; PostgreSQL drops them.
		return nil
	}
	s.sendError(errorf(codeProtocolViolation, "unexpected message %T", msg))
	return s.readyForQuery()
}

// extended finishes one extended-protocol message: an error is sent and
// the rest up to Sync is skipped.
func (s *session) extended(err error) error {
	if err == nil {
		return nil
	}
	var fatal *fatalError
	if errors.As(err, &fatal) {
		return fatal.err
	}
	s.sendError(err)
	s.abortOnError()
	s.skipToSync = true
	return nil
}

// fatalError is an I/O error that ends the session.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }

// abortOnError applies an error to the transaction: an explicit block
// becomes failed, an implicit transaction is rolled back.
func (s *session) abortOnError() {
	if s.explicit {
		s.failed = true
		return
	}
	s.endTxn()
}

// endTxn ends the session's transaction: its key locks are released
// (after its commit, when it commits), so that waiting writers go on.
func (s *session) endTxn() {
	if s.tx != nil {
		s.tx.finish()
	}
	s.tx = nil
	s.explicit = false
	s.failed = false
}

func (s *session) commitImplicit() error {
	err := s.srv.commit(s.tx)
	s.endTxn()
	return err
}

func (s *session) simpleQuery(sql string) error {
	stmts, err := Classify(sql)
	if err != nil {
		s.srv.metrics.statement(KindUnsupported, 0)
		s.sendError(err)
		s.abortOnError()
		return s.readyForQuery()
	}
	if len(stmts) == 0 {
		s.be.Send(&pgproto3.EmptyQueryResponse{})
		return s.readyForQuery()
	}
	for _, st := range stmts {
		res, err := s.run(st, len(stmts) > 1, nil)
		if err != nil {
			var fatal *fatalError
			if errors.As(err, &fatal) {
				return fatal.err
			}
			s.sendError(err)
			s.abortOnError()
			return s.readyForQuery()
		}
		if res != nil {
			s.sendResult(res, nil, true)
		}
	}
	if !s.explicit && s.tx != nil {
		if err := s.commitImplicit(); err != nil {
			s.sendError(err)
		}
	}
	return s.readyForQuery()
}

// run dispatches one statement to its handler, timing it by kind.
// formats are the result formats of a portal (nil: text); COPY streams
// its own messages and returns a nil result.
func (s *session) run(st *Statement, multi bool, formats []int16) (res *result, err error) {
	began := time.Now()
	defer func() {
		if r := recover(); r != nil {
			s.srv.log.Error("lake: statement panicked", "kind", st.Kind, "panic", r)
			res, err = nil, errorf(codeInternal, "internal error in %s: %v", st.Kind, r)
		}
		s.srv.metrics.statement(st.Kind, time.Since(began))
		s.srv.countConflict(st.Kind, err)
	}()
	if s.failed && st.Kind != KindCommit && st.Kind != KindRollback {
		return nil, errorf(codeInFailedTxn, "current transaction is aborted, commands ignored until end of transaction block")
	}
	switch st.Kind {
	case KindUnsupported:
		return nil, st.err
	case KindBegin:
		if s.explicit {
			return &result{tag: "BEGIN", notices: []notice{{"WARNING", "25001", "there is already a transaction in progress"}}}, nil
		}
		if s.tx == nil {
			s.tx = s.newTxn()
		}
		s.explicit = true
		return &result{tag: "BEGIN"}, nil
	case KindCommit:
		if !s.explicit {
			return &result{tag: "COMMIT", notices: []notice{{"WARNING", "25P01", "there is no transaction in progress"}}}, nil
		}
		if s.failed {
			s.endTxn()
			return &result{tag: "ROLLBACK"}, nil
		}
		err := s.srv.commit(s.tx)
		s.endTxn()
		if err != nil {
			return nil, err
		}
		return &result{tag: "COMMIT"}, nil
	case KindRollback:
		if !s.explicit {
			return &result{tag: "ROLLBACK", notices: []notice{{"WARNING", "25P01", "there is no transaction in progress"}}}, nil
		}
		s.endTxn()
		return &result{tag: "ROLLBACK"}, nil
	case KindDiscardAll:
		if s.explicit || multi {
			return nil, errorf("25001", "DISCARD ALL cannot run inside a transaction block")
		}
		s.stmts = map[string]*Statement{}
		s.portals = map[string]*portal{}
		return &result{tag: "DISCARD ALL"}, nil
	}
	if s.tx == nil {
		s.tx = s.newTxn()
	}
	tx := s.tx
	tx.begin()
	switch st.Kind {
	case KindProbeVersion:
		return versionResult(st.limit == 2), nil
	case KindProbeRegclass:
		return tx.regclassResult(st.regclass), nil
	case KindSelectConst:
		return constResult(st), nil
	case KindNamespaces:
		return namespacesResult(tx.namespaces()), nil
	case KindColumns:
		return columnsResult(tx.visibleTables(), tx.userNamespaceOIDs(), st.filter), nil
	case KindEnums:
		return enumsResult(), nil
	case KindComposites:
		return compositesResult(tx.visibleTables(), tx.userNamespaceOIDs()), nil
	case KindIndexes:
		return indexesResult(tx.visibleTables(), tx.userNamespaceOIDs()), nil
	case KindSchemata:
		return schemataResult(tx.namespaces()), nil
	case KindInfoColumns:
		return infoColumnsResult(tx.visibleTables(), st.filter), nil
	case KindSelect:
		return tx.runSelect(st.sel)
	case KindInsert:
		return tx.runInsert(st.insert)
	case KindUpdate:
		return tx.runUpdate(st.update)
	case KindDelete:
		return tx.runDelete(st.delete)
	case KindCreateTable:
		return tx.runCreate(st.create)
	case KindDropTable:
		return tx.runDrop(st.drop)
	case KindCreateSchema:
		return tx.runCreateSchema(st.schema)
	case KindCopyOut:
		// The rows are rendered as the scan produces them; nothing is
		// sent before the scan has succeeded.
		out := &copyOutBuf{f: st.copyFmt}
		res, err := tx.runSelectInto(st.sel, out.add)
		if err != nil {
			return nil, err
		}
		if err := s.sendCopyOut(res, out); err != nil {
			return nil, &fatalError{err}
		}
		return nil, nil
	case KindCopyIn:
		return nil, s.copyIn(tx, st)
	}
	return nil, errUnsupported(summary(st.Text))
}

// newTxn starts a transaction that the session's cancel requests reach.
func (s *session) newTxn() *txn {
	tx := newTxn(s.srv.store)
	tx.intr = &s.intr
	return tx
}

func constResult(st *Statement) *result {
	res := &result{}
	row := make([]Value, len(st.constCols))
	for i, c := range st.constCols {
		v := c.v
		if v.T == TUnknown {
			v = nullOf(TText)
			if !c.v.Null {
				v = textOf(TText, c.v.S)
			}
		}
		res.cols = append(res.cols, resultCol{name: "?column?", t: v.T})
		row[i] = v
	}
	if st.limit != 0 {
		res.rows = [][]Value{row}
	}
	res.tag = fmt.Sprintf("SELECT %d", len(res.rows))
	return res
}

func rowDescription(cols []resultCol, formats []int16) *pgproto3.RowDescription {
	rd := &pgproto3.RowDescription{}
	for i, c := range cols {
		rd.Fields = append(rd.Fields, pgproto3.FieldDescription{
			Name: []byte(c.name), TableOID: c.tableOID, TableAttributeNumber: uint16(c.attnum),
			DataTypeOID: c.t.OID(), DataTypeSize: c.t.Size(), TypeModifier: -1, Format: formatOf(formats, i),
		})
	}
	return rd
}

func formatOf(formats []int16, i int) int16 {
	switch len(formats) {
	case 0:
		return 0
	case 1:
		return formats[0]
	}
	if i < len(formats) {
		return formats[i]
	}
	return 0
}

// sendResult writes notices, the rows (with their RowDescription unless
// the portal was described) and the command tag.
func (s *session) sendResult(res *result, formats []int16, describe bool) {
	for _, n := range res.notices {
		s.be.Send(&pgproto3.NoticeResponse{Severity: n.severity, SeverityUnlocalized: n.severity, Code: n.code, Message: n.msg})
	}
	if res.cols != nil {
		if describe {
			s.be.Send(rowDescription(res.cols, formats))
		}
		// One DataRow and one buffer serve every row: Send encodes the
		// message at once.
		dr := &pgproto3.DataRow{}
		buf := make([]byte, 0, 256) // never nil: an empty value is not NULL
		var ends []int
		for _, r := range res.rows {
			buf, ends = buf[:0], ends[:0]
			for i, v := range r {
				switch {
				case v.Null:
				case formatOf(formats, i) == 1:
					buf = v.AppendBinary(buf)
				default:
					buf = append(buf, v.Text()...)
				}
				ends = append(ends, len(buf))
			}
			dr.Values = dr.Values[:0]
			start := 0
			for i, v := range r {
				if v.Null {
					dr.Values = append(dr.Values, nil)
				} else {
					dr.Values = append(dr.Values, buf[start:ends[i]:ends[i]])
				}
				start = ends[i]
			}
			s.be.Send(dr)
		}
	}
	s.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(res.tag)})
}

// copyFlushBytes is how much of a COPY's output is sent per flush.
const copyFlushBytes = 256 << 10

// sendCopyOut sends a COPY's messages, flushed every copyFlushBytes so
// that a big result is not gathered again in the send buffer.
func (s *session) sendCopyOut(res *result, out *copyOutBuf) error {
	format := byte(0)
	if out.f.binary {
		format = 1
	}
	codes := make([]uint16, len(res.cols))
	for i := range codes {
		codes[i] = uint16(format)
	}
	s.be.Send(&pgproto3.CopyOutResponse{OverallFormat: format, ColumnFormatCodes: codes})
	pending := 0
	msg := &pgproto3.CopyData{} // Send encodes it at once: one serves every row
	err := out.messages(func(m []byte) error {
		msg.Data = m
		s.be.Send(msg)
		if pending += len(m) + 5; pending >= copyFlushBytes {
			pending = 0
			return s.be.Flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.be.Send(&pgproto3.CopyDone{})
	s.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(fmt.Sprintf("COPY %d", out.rows()))})
	return nil
}

// copyIn runs COPY ... FROM STDIN: the whole stream is read, parsed and
// checked before any row is added, so a malformed stream adds nothing.
func (s *session) copyIn(tx *txn, st *Statement) error {
	t, idx, err := tx.copyTarget(st.copyIn)
	if err != nil {
		return err
	}
	format := byte(0)
	if st.binary {
		format = 1
	}
	codes := make([]uint16, len(idx))
	for i := range codes {
		codes[i] = uint16(format)
	}
	s.be.Send(&pgproto3.CopyInResponse{OverallFormat: format, ColumnFormatCodes: codes})
	if err := s.be.Flush(); err != nil {
		return &fatalError{err}
	}
	var data []byte
	tooBig := false
	for done := false; !done; {
		msg, err := s.be.Receive()
		if err != nil {
			return &fatalError{err}
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if err := s.intr.check(); err != nil {
				return err
			}
			if len(data)+len(m.Data) > maxCopyBytes {
				tooBig = true
				continue
			}
			data = append(data, m.Data...)
		case *pgproto3.CopyDone:
			done = true
		case *pgproto3.CopyFail:
			return errorf("57014", "COPY from stdin failed: %s", m.Message)
		case *pgproto3.Flush, *pgproto3.Sync:
		default:
			return errorf(codeProtocolViolation, "unexpected message type 0x%02x during COPY from stdin", msgType(msg))
		}
	}
	if tooBig {
		return errorf("54000", "COPY from stdin larger than %d bytes", maxCopyBytes)
	}
	rows, err := decodeCopyIn(data, copyColumns(t, idx), st.copyFmt)
	if err != nil {
		return err
	}
	if err := tx.insertCopied(t, idx, rows); err != nil {
		return err
	}
	s.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(fmt.Sprintf("COPY %d", len(rows)))})
	return nil
}

func msgType(m pgproto3.FrontendMessage) byte {
	b, err := m.Encode(nil)
	if err != nil || len(b) == 0 {
		return 0
	}
	return b[0]
}
