package gateway

import (
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/scram"
)

// authenticate runs the configured authentication exchange for c.user.
func (c *conn) authenticate() error {
	switch c.srv.cfg.Auth.Method {
	case AuthTrust:
		if !c.srv.cfg.Auth.AllowTrustRemote && !isLocal(c.nc.RemoteAddr()) {
			return &errs.Error{Code: errs.InvalidAuthorization, SQLState: "28000",
				Message: fmt.Sprintf("trust authentication is refused for remote connection from %s (user %q)", c.nc.RemoteAddr(), c.user),
				Hint:    "configure password or scram-sha-256 authentication, or allow trust for remote clients explicitly"}
		}
		return c.trustedUser()
	case AuthCert:
		return c.authCert()
	case AuthOIDC:
		return c.authOIDC()
	case AuthPassword:
		return c.authPassword()
	case AuthSCRAM:
		return c.authSCRAM()
	}
	return errs.Newf(errs.Internal, "unknown authentication method %q", c.srv.cfg.Auth.Method)
}

// trustedUser sets the privileges of c.user, whose identity is
// established without a password (trust, a client certificate).
func (c *conn) trustedUser() error {
	role, err := c.srv.eng.LookupRole(c.user)
	if err != nil {
		return err
	}
	// Without roles there are no privileges: every user may do
	// everything, as a superuser would.
	c.superuser = role == nil || role.Superuser
	return nil
}

// isLocal reports whether addr is a loopback address or a Unix socket.
func isLocal(addr net.Addr) bool {
	switch a := addr.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	case nil:
		return false
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// authFailed records a failed password check (throttle.go) and returns
// the error the client sees.
func (c *conn) authFailed() error {
	c.srv.throttle.failed(throttleKeyOf(c.nc.RemoteAddr(), c.user), time.Now())
	return errs.Newf(errs.InvalidPassword, "password authentication failed for user %q", c.user)
}

// awaitTurn waits until the client's password may be checked: after
// failures of the same user from the same address, checks are spaced out
// (throttle.go). A turn beyond the authentication deadline fails at once,
// without a check.
func (c *conn) awaitTurn() error {
	at := c.srv.throttle.reserve(throttleKeyOf(c.nc.RemoteAddr(), c.user), time.Now())
	if !c.authDeadline.IsZero() && at.After(c.authDeadline) {
		return errs.Newf(errs.InvalidPassword, "password authentication failed for user %q", c.user)
	}
	if d := time.Until(at); d > 0 {
		time.Sleep(d)
	}
	return nil
}

// authSucceeded clears the failures of the client's address and user.
func (c *conn) authSucceeded() {
	c.srv.throttle.succeeded(throttleKeyOf(c.nc.RemoteAddr(), c.user))
}

// verifier returns the stored password of c.user: a configured user's or
// a role's. ok is false when the user has none (or does not exist).
func (c *conn) verifier() (v scram.Verifier, superuser, ok bool, err error) {
	if pw, found := c.srv.cfg.Auth.Users[c.user]; found {
		v, err := c.srv.users.get(c.user, pw)
		return v, true, err == nil, err
	}
	role, err := c.srv.eng.LookupRole(c.user)
	if err != nil || role == nil || role.Verifier == "" {
		return scram.Verifier{}, false, false, err
	}
	v, err = scram.ParseVerifier(role.Verifier)
	if err != nil {
		return scram.Verifier{}, false, false, nil
	}
	return v, role.Superuser, true, nil
}

// checkLogin refuses a role that exists but may not log in.
func (c *conn) checkLogin() error {
	if _, found := c.srv.cfg.Auth.Users[c.user]; found {
		return nil
	}
	role, err := c.srv.eng.LookupRole(c.user)
	if err != nil {
		return err
	}
	if role != nil && !role.CanLogin {
		return errs.Newf(errs.InvalidAuthorization, "role %q is not permitted to log in", c.user)
	}
	return nil
}

// readCleartextPassword asks for the password in clear text and reads
// it, refusing a malformed PasswordMessage; it returns once the failed
// logins throttle lets this attempt be checked (awaitTurn).
func (c *conn) readCleartextPassword() (*pgproto3.PasswordMessage, error) {
	c.be.Send(&pgproto3.AuthenticationCleartextPassword{})
	if err := c.flush(); err != nil {
		return nil, err
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeCleartextPassword); err != nil {
		return nil, err
	}
	m, err := c.be.Receive()
	if raw := c.frames.lastMessage(); raw != nil {
		if bad := checkPasswordMessage(raw); bad != nil {
			return nil, bad
		}
	}
	if err != nil {
		return nil, errClose
	}
	pm, ok := m.(*pgproto3.PasswordMessage)
	if !ok {
		return nil, protocolErrorf("expected password response, got message type %T", m)
	}
	if err := c.awaitTurn(); err != nil {
		return nil, err
	}
	return pm, nil
}

func (c *conn) authPassword() error {
	pm, err := c.readCleartextPassword()
	if err != nil {
		return err
	}
	if pw, found := c.srv.cfg.Auth.Users[c.user]; found {
		if subtle.ConstantTimeCompare([]byte(pw), []byte(pm.Password)) != 1 {
			return c.authFailed()
		}
		c.superuser = true
		c.authSucceeded()
		return nil
	}
	v, superuser, ok, err := c.verifier()
	if err != nil {
		return err
	}
	if !ok || !v.CheckPassword(pm.Password) {
		return c.authFailed()
	}
	c.superuser = superuser
	c.authSucceeded()
	return c.checkLogin()
}

func (c *conn) authSCRAM() error {
	// Over TLS the server offers channel binding too, first, as
	// PostgreSQL does.
	var endPoint []byte
	if _, ok := c.tlsState(); ok {
		endPoint = c.srv.endPoint
	}
	mechanisms := []string{scram.Mechanism}
	if endPoint != nil {
		mechanisms = []string{scram.MechanismPlus, scram.Mechanism}
	}
	c.be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: mechanisms})
	if err := c.flush(); err != nil {
		return err
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeSASL); err != nil {
		return err
	}
	m, err := c.be.Receive()
	if err != nil {
		return errClose
	}
	init, ok := m.(*pgproto3.SASLInitialResponse)
	if !ok {
		return protocolErrorf("expected SASL response, got message type %T", m)
	}
	plus := init.AuthMechanism == scram.MechanismPlus
	if init.AuthMechanism != scram.Mechanism && (!plus || endPoint == nil) {
		return protocolErrorf("client selected an invalid SASL authentication mechanism")
	}
	v, superuser, known, err := c.verifier()
	if err != nil {
		return err
	}
	if !known {
		// Go through the exchange with a verifier no password matches, so
		// that a client cannot tell which users exist.
		v = scram.MockVerifier(c.user, c.srv.secret)
	}
	conv := scram.NewConversation(v)
	conv.Bind(plus, endPoint)
	out, err := conv.Step(init.Data)
	if err != nil {
		return scramFailure(err)
	}
	c.be.Send(&pgproto3.AuthenticationSASLContinue{Data: out})
	if err := c.flush(); err != nil {
		return err
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeSASLContinue); err != nil {
		return err
	}
	m, err = c.be.Receive()
	if err != nil {
		return errClose
	}
	resp, ok := m.(*pgproto3.SASLResponse)
	if !ok {
		return protocolErrorf("expected SASL response, got message type %T", m)
	}
	if err := c.awaitTurn(); err != nil {
		return err
	}
	out, err = conv.Step(resp.Data)
	if errors.Is(err, scram.ErrFailed) || (err == nil && !known) {
		return c.authFailed()
	}
	if err != nil {
		return scramFailure(err)
	}
	c.be.Send(&pgproto3.AuthenticationSASLFinal{Data: out})
	c.superuser = superuser
	c.authSucceeded()
	return c.checkLogin()
}

// scramFailure is the FATAL error a failed SCRAM step ends the
// connection with: PostgreSQL's message and detail, 28000 for a refused
// negotiation, 08P01 otherwise.
func scramFailure(err error) error {
	var se *scram.Error
	if !errors.As(err, &se) {
		return protocolErrorf("%v", err)
	}
	code := errs.ProtocolViolation
	if se.Authorization {
		code = errs.InvalidAuthorization
	}
	e := errs.New(code, se.Message).(*errs.Error)
	e.Detail = se.Detail
	return e
}

// tlsEndPoint returns the tls-server-end-point channel binding data of
// the server's certificate, nil when there is no single certificate to
// bind to.
func tlsEndPoint(cfg *tls.Config) []byte {
	if cfg == nil || len(cfg.Certificates) != 1 || cfg.GetCertificate != nil || len(cfg.Certificates[0].Certificate) == 0 {
		return nil
	}
	leaf := cfg.Certificates[0].Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(cfg.Certificates[0].Certificate[0]); err != nil {
			return nil
		}
	}
	ep, err := scram.TLSServerEndPoint(leaf)
	if err != nil {
		return nil
	}
	return ep
}

// userVerifiers derives, once per user, the SCRAM verifiers of the
// configured users' passwords.
type userVerifiers struct {
	users map[string]string
	mu    struct {
		sync.Mutex
		byUser map[string]scram.Verifier
	}
}

func newUserVerifiers(users map[string]string) *userVerifiers {
	u := &userVerifiers{users: users}
	u.mu.byUser = map[string]scram.Verifier{}
	return u
}

func (u *userVerifiers) get(user, password string) (scram.Verifier, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if v, ok := u.mu.byUser[user]; ok {
		return v, nil
	}
	v, err := scram.NewVerifier(password)
	if err != nil {
		return scram.Verifier{}, err
	}
	u.mu.byUser[user] = v
	return v, nil
}
