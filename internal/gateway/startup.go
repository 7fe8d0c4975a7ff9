package gateway

import (
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/runtime"
)

// ServerVersion is what the gateway reports as server_version: clients
// parse the leading number and treat RockStream as PostgreSQL 15.
const ServerVersion = "15.0 (RockStream)"

// startup runs the connection's start: TLS or GSS negotiation, a cancel
// request, or the startup message, authentication and the session's
// parameters, ending with the first ReadyForQuery.
func (c *conn) startup() error {
	// A client has this long to start up and authenticate, as with
	// PostgreSQL's authentication_timeout.
	c.authDeadline = time.Now().Add(c.srv.cfg.AuthenticationTimeout)
	_ = c.raw.SetDeadline(c.authDeadline)
	negotiated := false
	for {
		m, err := c.be.ReceiveStartupMessage()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
				return errClose
			}
			if isTimeout(err) {
				// The authentication deadline: closed without a word, as
				// PostgreSQL closes a connection that sends no startup
				// packet in time.
				c.srv.log.Debug("gateway: no startup packet before the authentication timeout", "pid", c.pid, "remote", c.nc.RemoteAddr().String())
				return errClose
			}
			if strings.Contains(err.Error(), "unknown startup message code") {
				return protocolErrorf("unsupported frontend protocol: server supports 3.0")
			}
			return protocolErrorf("invalid startup packet: %v", err)
		}
		switch m := m.(type) {
		case *pgproto3.SSLRequest:
			if negotiated {
				return protocolErrorf("unexpected SSLRequest: encryption was already negotiated")
			}
			negotiated = true
			if err := c.startTLS(); err != nil {
				return err
			}
		case *pgproto3.GSSEncRequest:
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return errClose
			}
		case *pgproto3.CancelRequest:
			c.srv.cancelRequest(m.ProcessID, m.SecretKey)
			return errClose
		case *pgproto3.StartupMessage:
			return c.start(m)
		}
	}
}

// startTLS answers an SSLRequest: 'N' without TLS, else 'S' and the
// handshake.
func (c *conn) startTLS() error {
	cfg := c.srv.cfg.TLS
	if cfg == nil {
		if _, err := c.nc.Write([]byte{'N'}); err != nil {
			return errClose
		}
		return nil
	}
	if _, err := c.nc.Write([]byte{'S'}); err != nil {
		return errClose
	}
	tc := tls.Server(c.nc, cfg)
	if err := tc.Handshake(); err != nil {
		c.srv.log.Info("gateway: TLS handshake failed", "pid", c.pid, "err", err)
		c.srv.rejected(c)
		return errClose
	}
	c.nc = tc
	c.frames = newFrameReader(tc)
	c.be = pgproto3.NewBackend(c.frames, tc)
	c.be.SetMaxBodyLen(c.srv.cfg.MaxMessageBytes)
	return nil
}

// cancelRequest cancels the statement running on connection pid when the
// secret matches; a wrong key is ignored silently, as in PostgreSQL.
func (s *Server) cancelRequest(pid uint32, secret []byte) {
	c := s.lookup(pid)
	if c == nil || subtle.ConstantTimeCompare(c.secret, secret) != 1 {
		s.log.Info("gateway: cancel request with a wrong key ignored", "pid", pid)
		return
	}
	c.cancelStatement(errUserCancel)
}

// start handles the startup message: limits, authentication, session
// parameters, then AuthenticationOk, ParameterStatus, BackendKeyData and
// ReadyForQuery.
func (c *conn) start(m *pgproto3.StartupMessage) error {
	if m.ProtocolVersion != pgproto3.ProtocolVersion30 {
		// A newer 3.x minor version: offer 3.0, as PostgreSQL 15 does.
		var unknown []string
		for k := range m.Parameters {
			if strings.HasPrefix(k, "_pq_.") {
				unknown = append(unknown, k)
			}
		}
		sort.Strings(unknown)
		c.be.Send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: unknown})
	}
	params := map[string]string{}
	for k, v := range m.Parameters {
		// Names and values must be UTF-8, the only encoding there is: a
		// user name that is not cannot name a role.
		for _, s := range []string{k, v} {
			if err := checkUTF8([]byte(s)); err != nil {
				c.srv.rejected(c)
				return err
			}
		}
		params[k] = v
	}
	c.user = params["user"]
	if c.user == "" {
		c.srv.rejected(c)
		return errs.New(errs.InvalidAuthorization, "no PostgreSQL user name specified in startup packet")
	}
	if err := c.srv.takeSlot(c); err != nil {
		c.srv.rejected(c)
		return err
	}
	if err := c.checkTLSRequired(); err != nil {
		c.srv.rejected(c)
		return err
	}
	if err := c.authenticate(); err != nil {
		c.srv.rejected(c)
		c.srv.log.Info("gateway: authentication failed", "pid", c.pid, "user", c.user, "remote", c.nc.RemoteAddr().String(), "err", err)
		return err
	}
	if err := c.srv.checkReserved(c); err != nil {
		c.srv.rejected(c)
		return err
	}
	c.srv.log.Debug("gateway: session started", "pid", c.pid, "user", c.user, "remote", c.nc.RemoteAddr().String(), "application_name", params["application_name"])
	c.sess = c.srv.eng.NewSession()
	c.sess.OnNotice(c.sendNotice)
	if d := c.srv.cfg.StatementTimeout; d > 0 {
		_ = c.sess.Set("statement_timeout", d.String())
	}
	if d := c.srv.cfg.IdleInTransactionTimeout; d > 0 {
		_ = c.sess.Set("idle_in_transaction_session_timeout", d.String())
	}
	// The system catalog reports who and where the session is
	// (current_user, current_database()); PostgreSQL's default database
	// is the user's name.
	database := params["database"]
	if database == "" {
		database = c.user
	}
	// The defaults ALTER ROLE and ALTER DATABASE stored come before the
	// startup parameters, which override them.
	if err := c.sess.ApplyRoleSettings(c.user, database); err != nil {
		return err
	}
	if err := c.applyStartupParameters(params); err != nil {
		return err
	}
	if err := c.sess.Set("session_authorization", c.user); err != nil {
		return err
	}
	if err := c.sess.Set("current_database", database); err != nil {
		return err
	}
	c.sess.SetClient(runtime.ClientInfo{User: c.user, Database: database,
		ApplicationName: c.sess.Setting("application_name"), Addr: c.nc.RemoteAddr()})
	c.be.Send(&pgproto3.AuthenticationOk{})
	c.reported = map[string]string{}
	c.reportParameters()
	c.be.Send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: c.secret})
	_ = c.raw.SetDeadline(time.Time{})
	c.mu.Lock()
	c.mu.started = true
	c.mu.Unlock()
	return c.readyForQuery()
}

// applyStartupParameters sets the session settings the startup message
// carries, including those in options (-c name=value, --name=value).
func (c *conn) applyStartupParameters(params map[string]string) error {
	set := func(name, value string) error {
		name = strings.ToLower(name)
		if name == "client_encoding" && !isUTF8(value) {
			return errs.Newf(errs.InvalidParameterValue, "invalid value for parameter \"client_encoding\": %q: RockStream supports UTF8 only", value)
		}
		if err := c.sess.Set(name, value); err != nil {
			return err
		}
		return nil
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := params[k]
		switch {
		case k == "user", k == "database", strings.HasPrefix(k, "_pq_."):
		case k == "replication":
			if v != "false" && v != "off" && v != "0" {
				return errs.New(errs.FeatureNotSupported, "replication connections are not supported")
			}
		case k == "options":
			opts, err := parseOptions(v)
			if err != nil {
				return err
			}
			for _, o := range opts {
				if err := set(o[0], o[1]); err != nil {
					return err
				}
			}
		default:
			if err := set(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

func isUTF8(enc string) bool {
	switch strings.ToUpper(strings.ReplaceAll(enc, "-", "")) {
	case "UTF8", "UNICODE":
		return true
	}
	return false
}

// parseOptions parses the options startup parameter: command-line
// switches separated by spaces (a backslash escapes the next character),
// of which -c name=value and --name=value set settings.
func parseOptions(s string) ([][2]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	var out [][2]string
	for i := 0; i < len(words); i++ {
		w := words[i]
		var kv string
		switch {
		case w == "-c" && i+1 < len(words):
			i++
			kv = words[i]
		case strings.HasPrefix(w, "-c"):
			kv = w[2:]
		case strings.HasPrefix(w, "--"):
			kv = w[2:]
		default:
			return nil, errs.Newf(errs.FeatureNotSupported, "command-line option %q is not supported; use -c name=value", w)
		}
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, errs.Newf(errs.SyntaxError, "-c %s requires a value", kv)
		}
		out = append(out, [2]string{strings.ReplaceAll(name, "-", "_"), value})
	}
	return out, nil
}

// reportedParameters are the parameters ParameterStatus reports, in the
// order they are sent (sorted by name).
var reportedParameters = []string{
	"DateStyle", "IntervalStyle", "TimeZone", "application_name", "client_encoding",
	"default_transaction_read_only", "in_hot_standby", "integer_datetimes", "is_superuser",
	"server_encoding", "server_version", "session_authorization", "standard_conforming_strings",
}

// reportedValue returns the value of a reported parameter.
func (c *conn) reportedValue(name string) string {
	switch name {
	case "server_version":
		return ServerVersion
	case "server_encoding", "client_encoding":
		return "UTF8"
	case "DateStyle":
		return c.sess.Setting("datestyle")
	case "IntervalStyle":
		return c.sess.Setting("intervalstyle")
	case "TimeZone":
		return c.sess.Setting("timezone")
	case "application_name", "default_transaction_read_only":
		return c.sess.Setting(name)
	case "integer_datetimes", "standard_conforming_strings":
		return "on"
	case "is_superuser":
		if c.superuser {
			return "on"
		}
		return "off"
	case "session_authorization":
		return c.user
	}
	return "off" // in_hot_standby
}

// reportParameters sends ParameterStatus for each reported parameter whose
// value the client does not have yet: all of them after authentication,
// the changed ones after SET. It runs at every ReadyForQuery, so it
// builds nothing when nothing changed: while the session's settings keep
// their version, it looks at none of them.
func (c *conn) reportParameters() {
	c.reportCommitEpoch()
	v := c.sess.SettingsVersion()
	if c.reportedOK && v == c.reportedAt {
		return
	}
	c.reportedAt, c.reportedOK = v, true
	for _, k := range reportedParameters {
		v := c.reportedValue(k)
		if old, ok := c.reported[k]; ok && old == v {
			continue
		}
		c.reported[k] = v
		c.be.Send(&pgproto3.ParameterStatus{Name: k, Value: v})
	}
}

// commitEpochParameter is the ParameterStatus that reports the epoch the
// session's last commit is visible at (docs/wire.md, docs/sql.md#freshness-tokens).
const commitEpochParameter = "rockstream_commit_epoch"

// reportCommitEpoch sends ParameterStatus rockstream_commit_epoch when the
// session's last commit is visible at another epoch than the one the
// client was last told: after a commit, and only when the number changed.
// Before the session's first commit nothing is sent.
func (c *conn) reportCommitEpoch() {
	e := c.sess.LastCommitEpoch()
	if e == c.reportedEpoch {
		return
	}
	c.reportedEpoch = e
	c.be.Send(&pgproto3.ParameterStatus{Name: commitEpochParameter, Value: strconv.FormatUint(e, 10)})
}
