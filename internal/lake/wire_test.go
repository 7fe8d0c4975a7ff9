package lake

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// wireClient is a test client speaking the protocol with pgproto3, the
// way postgres_scanner's libpq does: it sends messages and collects every
// backend message up to ReadyForQuery.
type wireClient struct {
	nc   net.Conn
	fe   *pgproto3.Frontend
	addr string
	// key is the session's BackendKeyData, for cancel requests.
	key pgproto3.BackendKeyData
}

func dialWire(t testing.TB, addr, db string) *wireClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	c := &wireClient{nc: nc, fe: pgproto3.NewFrontend(nc, nc), addr: addr}
	c.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "postgres", "database": db, "application_name": "replay"}})
	msgs, err := c.until(t)
	if err != nil {
		t.Fatalf("startup on %s: %v", addr, err)
	}
	for _, m := range msgs {
		if k, ok := m.(*pgproto3.BackendKeyData); ok {
			c.key = *k
		}
	}
	if c.key.SecretKey == nil {
		t.Fatalf("startup on %s: no BackendKeyData", addr)
	}
	return c
}

// cancel sends a CancelRequest for c's session on a new connection, as
// libpq's PQcancel does, with the session's secret or, when wrong is
// set, another one; it waits for the server to close that connection.
func (c *wireClient) cancel(t testing.TB, wrong bool) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", c.addr, 10*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", c.addr, err)
	}
	defer nc.Close()
	secret := append([]byte(nil), c.key.SecretKey...)
	if wrong {
		secret[0] ^= 0xFF
	}
	b, err := (&pgproto3.CancelRequest{ProcessID: c.key.ProcessID, SecretKey: secret}).Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(b); err != nil {
		t.Fatalf("cancel request to %s: %v", c.addr, err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := nc.Read(make([]byte, 1))
	var ne net.Error
	switch {
	case n != 0 || err == nil:
		t.Fatalf("cancel request to %s: the server answered", c.addr)
	case errors.As(err, &ne) && ne.Timeout():
		t.Fatalf("cancel request to %s: the server kept the connection open", c.addr)
	}
}

func (c *wireClient) close() {
	c.fe.Send(&pgproto3.Terminate{})
	_ = c.fe.Flush()
	c.nc.Close()
}

// until flushes what was sent and reads up to ReadyForQuery. Messages
// are copied, since pgproto3 reuses its buffers.
func (c *wireClient) until(t testing.TB) ([]pgproto3.BackendMessage, error) {
	if err := c.fe.Flush(); err != nil {
		return nil, err
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	var out []pgproto3.BackendMessage
	for {
		m, err := c.fe.Receive()
		if err != nil {
			return out, err
		}
		out = append(out, copyMsg(m))
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			return out, nil
		}
	}
}

func copyMsg(m pgproto3.BackendMessage) pgproto3.BackendMessage {
	b, err := m.Encode(nil)
	if err != nil {
		panic(err)
	}
	var cp pgproto3.BackendMessage
	switch m.(type) {
	case *pgproto3.RowDescription:
		cp = &pgproto3.RowDescription{}
	case *pgproto3.DataRow:
		cp = &pgproto3.DataRow{}
	case *pgproto3.CopyData:
		cp = &pgproto3.CopyData{}
	case *pgproto3.CommandComplete:
		cp = &pgproto3.CommandComplete{}
	case *pgproto3.ErrorResponse:
		cp = &pgproto3.ErrorResponse{}
	case *pgproto3.NoticeResponse:
		cp = &pgproto3.NoticeResponse{}
	case *pgproto3.ParameterDescription:
		cp = &pgproto3.ParameterDescription{}
	case *pgproto3.CopyOutResponse:
		cp = &pgproto3.CopyOutResponse{}
	case *pgproto3.CopyInResponse:
		cp = &pgproto3.CopyInResponse{}
	case *pgproto3.ParameterStatus:
		cp = &pgproto3.ParameterStatus{}
	default:
		return m
	}
	if err := cp.Decode(b[5:]); err != nil {
		panic(err)
	}
	return cp
}

// copyInRun sends a Query that starts COPY FROM STDIN; once the server
// answers CopyInResponse it sends chunks (each one CopyData) and CopyDone,
// or CopyFail when fail is set.
func (c *wireClient) copyInRun(t testing.TB, sql string, chunks [][]byte, fail string) ([]pgproto3.BackendMessage, error) {
	c.fe.Send(&pgproto3.Query{String: sql})
	if err := c.fe.Flush(); err != nil {
		return nil, err
	}
	var out []pgproto3.BackendMessage
	for {
		m, err := c.fe.Receive()
		if err != nil {
			return out, err
		}
		out = append(out, copyMsg(m))
		switch m.(type) {
		case *pgproto3.CopyInResponse:
			for _, ch := range chunks {
				c.fe.Send(&pgproto3.CopyData{Data: ch})
			}
			if fail != "" {
				c.fe.Send(&pgproto3.CopyFail{Message: fail})
			} else {
				c.fe.Send(&pgproto3.CopyDone{})
			}
			rest, err := c.until(t)
			return append(out, rest...), err
		case *pgproto3.ReadyForQuery:
			return out, nil
		}
	}
}

// normalizer renders backend messages as comparable text lines. It
// hides what legitimately differs between two servers: OIDs of user
// objects (renamed o1, o2, ... in order of first appearance, so equal
// OIDs stay equal), timestamps taken from the clock, and masked COPY
// fields; everything else (types, values, COPY bytes, tags, SQLSTATEs,
// transaction status) is shown exactly.
type normalizer struct {
	oids map[uint32]string
}

func newNormalizer() *normalizer { return &normalizer{oids: map[uint32]string{}} }

func (n *normalizer) oid(o uint32) string {
	if o < firstOID {
		return strconv.FormatUint(uint64(o), 10)
	}
	if s, ok := n.oids[o]; ok {
		return s
	}
	s := fmt.Sprintf("o%d", len(n.oids)+1)
	n.oids[o] = s
	return s
}

// renderOpts are a step's comparison options.
type renderOpts struct {
	// mask lists COPY output fields (0-based) whose bytes are hidden.
	mask map[int]bool
	// publicOnly drops rows of result sets with more than two columns
	// whose first column is the OID of a system namespace (not public's,
	// not a user schema's): the system relations PostgreSQL lists and
	// RockLake does not have.
	publicOnly bool
	// sortRows compares the rows of each result set, and the tuples of
	// each COPY, as a multiset: sorted, with COPY message boundaries
	// dropped (for ORDER BY ties, and for scans without ORDER BY, whose
	// order PostgreSQL's heap can change).
	sortRows bool
}

// systemNamespace says whether a namespace OID in text is one of
// PostgreSQL's system schemas (below FirstNormalObjectId, not public).
func systemNamespace(v string) bool {
	oid, err := strconv.ParseUint(v, 10, 32)
	return err == nil && oid != oidPublic && oid < firstOID
}

func (n *normalizer) render(msgs []pgproto3.BackendMessage, o renderOpts) string {
	var lines []string
	var rowTypes []uint32
	var rows []string
	dropped := 0
	flushRows := func() {
		if o.sortRows {
			sort.Strings(rows)
		}
		lines = append(lines, rows...)
		rows = nil
	}
	for _, m := range msgs {
		switch m := m.(type) {
		case *pgproto3.RowDescription:
			rowTypes = rowTypes[:0]
			dropped = 0
			var parts []string
			for _, f := range m.Fields {
				rowTypes = append(rowTypes, f.DataTypeOID)
				parts = append(parts, fmt.Sprintf("%s:%d/%d/%s.%d/f%d", f.Name, f.DataTypeOID, f.DataTypeSize,
					n.oid(f.TableOID), int16(f.TableAttributeNumber), f.Format))
			}
			lines = append(lines, "RowDescription "+strings.Join(parts, " "))
		case *pgproto3.DataRow:
			if o.publicOnly && len(m.Values) > 2 && m.Values[0] != nil && systemNamespace(string(m.Values[0])) {
				dropped++
				continue
			}
			var parts []string
			for i, v := range m.Values {
				switch {
				case v == nil:
					parts = append(parts, "NULL")
				case i < len(rowTypes) && rowTypes[i] == 1184:
					parts = append(parts, "<timestamptz>")
				case i < len(rowTypes) && rowTypes[i] == 26:
					u, err := strconv.ParseUint(string(v), 10, 32)
					if err != nil {
						parts = append(parts, string(v))
					} else {
						parts = append(parts, n.oid(uint32(u)))
					}
				case strings.HasPrefix(string(v), "PostgreSQL 15."):
					// version(): the major version is what clients read.
					parts = append(parts, `"PostgreSQL 15.*"`)
				default:
					parts = append(parts, strconv.Quote(string(v)))
				}
			}
			rows = append(rows, "  "+strings.Join(parts, " | "))
		case *pgproto3.CommandComplete:
			flushRows()
			tag := string(m.CommandTag)
			if dropped > 0 && strings.HasPrefix(tag, "SELECT ") {
				total, _ := strconv.Atoi(strings.TrimPrefix(tag, "SELECT "))
				tag = fmt.Sprintf("SELECT %d", total-dropped)
			}
			dropped = 0
			lines = append(lines, "CommandComplete "+tag)
		case *pgproto3.CopyData:
			if o.sortRows {
				// Tuples become rows to sort; the header and trailer stay.
				text := renderCopyData(m.Data, o.mask)
				if t, ok := strings.CutPrefix(text, "header"); ok {
					lines = append(lines, "CopyData header")
					text = strings.TrimSpace(t)
				}
				if t, ok := strings.CutSuffix(text, "trailer"); ok {
					if t = strings.TrimSpace(t); t != "" {
						rows = append(rows, "  "+t)
					}
					flushRows()
					lines = append(lines, "CopyData trailer")
					continue
				}
				if text != "" {
					rows = append(rows, "  "+text)
				}
				continue
			}
			lines = append(lines, "CopyData "+renderCopyData(m.Data, o.mask))
		case *pgproto3.CopyOutResponse:
			lines = append(lines, fmt.Sprintf("CopyOutResponse format=%d cols=%v", m.OverallFormat, m.ColumnFormatCodes))
		case *pgproto3.CopyInResponse:
			lines = append(lines, fmt.Sprintf("CopyInResponse format=%d cols=%v", m.OverallFormat, m.ColumnFormatCodes))
		case *pgproto3.CopyDone:
			lines = append(lines, "CopyDone")
		case *pgproto3.ErrorResponse:
			flushRows()
			s := fmt.Sprintf("Error %s %s %s", m.Severity, m.Code, m.Message)
			if m.Detail != "" {
				s += " (" + m.Detail + ")"
			}
			lines = append(lines, s)
		case *pgproto3.NoticeResponse:
			lines = append(lines, fmt.Sprintf("Notice %s %s %s", m.Severity, m.Code, m.Message))
		case *pgproto3.ReadyForQuery:
			lines = append(lines, fmt.Sprintf("ReadyForQuery %c", m.TxStatus))
		case *pgproto3.ParameterDescription:
			lines = append(lines, fmt.Sprintf("ParameterDescription %v", m.ParameterOIDs))
		case *pgproto3.ParseComplete:
			lines = append(lines, "ParseComplete")
		case *pgproto3.BindComplete:
			lines = append(lines, "BindComplete")
		case *pgproto3.NoData:
			lines = append(lines, "NoData")
		case *pgproto3.EmptyQueryResponse:
			lines = append(lines, "EmptyQueryResponse")
		case *pgproto3.CloseComplete:
			lines = append(lines, "CloseComplete")
		case *pgproto3.ParameterStatus, *pgproto3.BackendKeyData, *pgproto3.AuthenticationOk:
		default:
			lines = append(lines, fmt.Sprintf("%T", m))
		}
	}
	flushRows()
	return strings.Join(lines, "\n")
}

// renderCopyData shows one CopyData message: binary COPY as header,
// tuples of fields and trailer, each field as a quoted string when it
// is printable text and as hex otherwise; text COPY as its quoted text.
func renderCopyData(b []byte, mask map[int]bool) string {
	if !looksBinary(b) {
		return strconv.Quote(string(b))
	}
	var parts []string
	if strings.HasPrefix(string(b), binarySignature) && len(b) >= 19 {
		parts = append(parts, "header")
		b = b[19:]
	}
	for len(b) >= 2 {
		n := int16(binary.BigEndian.Uint16(b))
		b = b[2:]
		if n == -1 {
			parts = append(parts, "trailer")
			continue
		}
		var fields []string
		for i := 0; i < int(n); i++ {
			if len(b) < 4 {
				return strings.Join(parts, " ") + " <truncated>"
			}
			l := int32(binary.BigEndian.Uint32(b))
			b = b[4:]
			if l < 0 {
				fields = append(fields, "NULL")
				continue
			}
			if int(l) > len(b) {
				return strings.Join(parts, " ") + " <truncated>"
			}
			f := b[:l]
			b = b[l:]
			switch {
			case mask[i]:
				fields = append(fields, "<masked>")
			case printable(f) && len(f) > 0:
				fields = append(fields, strconv.Quote(string(f)))
			default:
				fields = append(fields, hex.EncodeToString(f))
			}
		}
		parts = append(parts, "("+strings.Join(fields, ", ")+")")
	}
	if len(b) > 0 {
		parts = append(parts, "extra "+hex.EncodeToString(b))
	}
	return strings.Join(parts, " ")
}

func looksBinary(b []byte) bool {
	if strings.HasPrefix(string(b), binarySignature) {
		return true
	}
	return len(b) >= 2 && (b[0] == 0 || b[0] == 0xFF)
}

func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7E {
			return false
		}
	}
	return true
}
