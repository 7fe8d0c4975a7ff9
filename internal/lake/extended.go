package lake

import (
	"github.com/jackc/pgx/v5/pgproto3"
)

// The extended query protocol, as postgres_query uses it: Parse of one
// statement without parameters, Describe of the statement (its
// ParameterDescription and RowDescription), Bind, Execute and Sync.

func (s *session) parse(m *pgproto3.Parse) error {
	stmts, err := Classify(m.Query)
	if err != nil {
		return err
	}
	if len(stmts) > 1 {
		return errorf(codeSyntax, "cannot insert multiple commands into a prepared statement")
	}
	if len(m.ParameterOIDs) > 0 {
		return errUnsupported("prepared statements with parameters")
	}
	st := &Statement{Kind: KindUnsupported, err: errorf(codeUnsupported, "empty query")}
	if len(stmts) == 1 {
		st = stmts[0]
	}
	if st.Kind == KindUnsupported {
		return st.err
	}
	if st.Kind == KindCopyIn || st.Kind == KindCopyOut {
		return errUnsupported("COPY in the extended protocol")
	}
	s.stmts[m.Name] = st
	s.be.Send(&pgproto3.ParseComplete{})
	return nil
}

func (s *session) bind(m *pgproto3.Bind) error {
	st, ok := s.stmts[m.PreparedStatement]
	if !ok {
		return errorf("26000", "prepared statement %q does not exist", m.PreparedStatement)
	}
	if len(m.Parameters) > 0 {
		return errorf(codeProtocolViolation, "bind message supplies %d parameters, but prepared statement %q requires 0", len(m.Parameters), m.PreparedStatement)
	}
	s.portals[m.DestinationPortal] = &portal{st: st, formats: m.ResultFormatCodes}
	s.be.Send(&pgproto3.BindComplete{})
	return nil
}

// describeCols says what columns a statement returns, without running
// it: scans are bound against the catalog (their subqueries evaluated).
func (s *session) describeCols(st *Statement) ([]resultCol, error) {
	switch st.Kind {
	case KindSelect:
		// Describing takes no snapshot for the session's transaction, as
		// in PostgreSQL; a transaction that has one describes with it.
		tx := s.tx
		if tx == nil || !tx.started {
			tx = newTxn(s.srv.store)
			defer tx.finish()
		}
		tx.begin()
		p := *st.sel
		p.limit = 0
		res, err := tx.runSelect(&p)
		if err != nil {
			return nil, err
		}
		return res.cols, nil
	case KindProbeVersion:
		return versionResult(st.limit == 2).cols, nil
	case KindSelectConst:
		return constResult(st).cols, nil
	}
	return nil, nil
}

func (s *session) describe(m *pgproto3.Describe) error {
	var st *Statement
	var formats []int16
	if m.ObjectType == 'S' {
		var ok bool
		if st, ok = s.stmts[m.Name]; !ok {
			return errorf("26000", "prepared statement %q does not exist", m.Name)
		}
		s.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: []uint32{}})
	} else {
		p, ok := s.portals[m.Name]
		if !ok {
			return errorf("34000", "portal %q does not exist", m.Name)
		}
		st, formats = p.st, p.formats
	}
	cols, err := s.describeCols(st)
	if err != nil {
		return err
	}
	if cols == nil {
		s.be.Send(&pgproto3.NoData{})
		return nil
	}
	s.be.Send(rowDescription(cols, formats))
	return nil
}

func (s *session) execute(m *pgproto3.Execute) error {
	p, ok := s.portals[m.Portal]
	if !ok {
		return errorf("34000", "portal %q does not exist", m.Portal)
	}
	res, err := s.run(p.st, false, p.formats)
	if err != nil {
		return err
	}
	if res != nil {
		if m.MaxRows > 0 && uint32(len(res.rows)) > m.MaxRows {
			return errUnsupported("Execute with a row limit")
		}
		s.sendResult(res, p.formats, false)
	}
	return nil
}
