// Package scram implements the server side of SCRAM-SHA-256 (RFC 5802 and
// RFC 7677) as PostgreSQL uses it, and PostgreSQL's stored form of a
// password: the verifier
//
//	SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>
//
// (base64 salt and keys), from which a password cannot be recovered but
// against which a SCRAM exchange or a cleartext password can be checked.
//
// The package is pure: no I/O. A Conversation is driven by the caller, one
// client message in, one server message out. Over TLS the server may
// offer channel binding (SCRAM-SHA-256-PLUS, RFC 5929's
// tls-server-end-point, as PostgreSQL does): Conversation.Bind says which
// mechanism the client chose and what the binding data is, and the
// exchange then fails unless the client proves the same data, which a
// man in the middle with another certificate cannot. As in PostgreSQL,
// the user name inside the SCRAM messages is ignored: the startup message
// names the user.
package scram

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
)

// Mechanism is the SASL mechanism name; MechanismPlus is the one with
// channel binding.
const (
	Mechanism     = "SCRAM-SHA-256"
	MechanismPlus = "SCRAM-SHA-256-PLUS"
)

// BindingType is the only channel binding type offered.
const BindingType = "tls-server-end-point"

// DefaultIterations is PostgreSQL's default scram_iterations.
const DefaultIterations = 4096

const saltLen = 16

// Verifier is a stored password: what the server keeps per user.
type Verifier struct {
	Iterations int
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
}

// NewVerifier derives a verifier for password with a fresh random salt.
// The password is prepared with SASLprep first, as PostgreSQL prepares it.
func NewVerifier(password string) (Verifier, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return Verifier{}, err
	}
	return DeriveVerifier(password, salt, DefaultIterations)
}

// DeriveVerifier derives the verifier of password for a given salt and
// iteration count.
func DeriveVerifier(password string, salt []byte, iterations int) (Verifier, error) {
	salted, err := pbkdf2.Key(sha256.New, saslprep(password), salt, iterations, sha256.Size)
	if err != nil {
		return Verifier{}, err
	}
	clientKey := mac(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	return Verifier{
		Iterations: iterations,
		Salt:       salt,
		StoredKey:  stored[:],
		ServerKey:  mac(salted, "Server Key"),
	}, nil
}

// String returns the verifier in PostgreSQL's stored form.
func (v Verifier) String() string {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("%s$%d:%s$%s:%s", Mechanism, v.Iterations, b64(v.Salt), b64(v.StoredKey), b64(v.ServerKey))
}

// IsVerifier reports whether s looks like a stored verifier rather than a
// password (PostgreSQL stores such a string as given).
func IsVerifier(s string) bool {
	_, err := ParseVerifier(s)
	return err == nil
}

// ParseVerifier parses PostgreSQL's stored form.
func ParseVerifier(s string) (Verifier, error) {
	bad := errors.New("scram: malformed verifier")
	rest, ok := strings.CutPrefix(s, Mechanism+"$")
	if !ok {
		return Verifier{}, bad
	}
	iterSalt, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return Verifier{}, bad
	}
	iterText, saltText, ok := strings.Cut(iterSalt, ":")
	if !ok {
		return Verifier{}, bad
	}
	storedText, serverText, ok := strings.Cut(keys, ":")
	if !ok {
		return Verifier{}, bad
	}
	var v Verifier
	var err error
	if v.Iterations, err = strconv.Atoi(iterText); err != nil || v.Iterations <= 0 {
		return Verifier{}, bad
	}
	dec := base64.StdEncoding.DecodeString
	if v.Salt, err = dec(saltText); err != nil || len(v.Salt) == 0 {
		return Verifier{}, bad
	}
	if v.StoredKey, err = dec(storedText); err != nil || len(v.StoredKey) != sha256.Size {
		return Verifier{}, bad
	}
	if v.ServerKey, err = dec(serverText); err != nil || len(v.ServerKey) != sha256.Size {
		return Verifier{}, bad
	}
	return v, nil
}

// CheckPassword reports whether password matches the verifier (for
// cleartext password authentication against a stored verifier).
func (v Verifier) CheckPassword(password string) bool {
	w, err := DeriveVerifier(password, v.Salt, v.Iterations)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(w.StoredKey, v.StoredKey) == 1 &&
		subtle.ConstantTimeCompare(w.ServerKey, v.ServerKey) == 1
}

// MockVerifier returns a verifier that no password matches, with a salt
// derived from name and secret, so that an exchange for a user who does
// not exist looks like one for a user who does and fails only at the end
// (PostgreSQL's mock authentication: user names cannot be probed).
func MockVerifier(name string, secret []byte) Verifier {
	salt := mac(secret, "mock salt "+name)[:saltLen]
	return Verifier{Iterations: DefaultIterations, Salt: salt}
}

func mac(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// ErrFailed is returned when the client's proof does not match: a wrong
// password (or a user without one).
var ErrFailed = errors.New("scram: authentication failed")

// Conversation is one server-side SCRAM exchange.
type Conversation struct {
	v     Verifier
	state int // 0: want client-first; 1: want client-final; 2: done

	// plus is set when the client chose MechanismPlus; endPoint is the
	// connection's binding data, nil when the server offers no binding.
	plus     bool
	endPoint []byte

	gs2Header       string
	clientFirstBare string
	serverFirst     string
	nonce           string

	// serverNonce returns the server's part of the nonce.
	serverNonce func() (string, error)
}

// NewConversation starts an exchange against v.
func NewConversation(v Verifier) *Conversation {
	return &Conversation{v: v, serverNonce: randomNonce}
}

// Bind sets the channel binding of the exchange, before its first step:
// plus says the client chose MechanismPlus, endPoint is the connection's
// tls-server-end-point data (TLSServerEndPoint), nil when the server did
// not offer MechanismPlus.
func (c *Conversation) Bind(plus bool, endPoint []byte) {
	c.plus, c.endPoint = plus, endPoint
}

// Error is a malformed or refused exchange, with PostgreSQL's message and
// detail. Authorization marks a refusal (SQLSTATE 28000) rather than a
// protocol violation (08P01).
type Error struct {
	Message, Detail string
	Authorization   bool
}

func (e *Error) Error() string {
	if e.Detail != "" {
		return e.Message + ": " + e.Detail
	}
	return e.Message
}

// randomNonce returns 18 random bytes in base64.
func randomNonce() (string, error) {
	raw := make([]byte, 18)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}

// Step consumes one client message and returns the server's answer: for
// the client-first message the server-first message, for the
// client-final message the server-final message. A malformed message is an
// error describing it; a wrong proof is ErrFailed.
func (c *Conversation) Step(msg []byte) ([]byte, error) {
	switch c.state {
	case 0:
		c.state = 1
		return c.first(string(msg))
	case 1:
		c.state = 2
		return c.final(string(msg))
	}
	return nil, errors.New("scram: exchange already finished")
}

func (c *Conversation) first(msg string) ([]byte, error) {
	// gs2-header: cbind-flag "," [authzid] ","
	flag, rest, ok := strings.Cut(msg, ",")
	if !ok {
		return nil, errors.New("malformed SCRAM message (missing GS2 header)")
	}
	switch {
	case flag == "n" || flag == "y":
		if c.plus {
			return nil, &Error{Message: "malformed SCRAM message",
				Detail: "The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include channel binding data."}
		}
		if flag == "y" && c.endPoint != nil {
			// The client would bind but believes the server cannot: a
			// man in the middle may have removed SCRAM-SHA-256-PLUS.
			return nil, &Error{Message: "SCRAM channel binding negotiation error", Authorization: true,
				Detail: "The client supports SCRAM channel binding but thinks the server does not.  However, this server does support channel binding."}
		}
	case strings.HasPrefix(flag, "p="):
		if !c.plus {
			return nil, &Error{Message: "malformed SCRAM message",
				Detail: "The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data."}
		}
		if typ := flag[2:]; typ != BindingType {
			return nil, &Error{Message: fmt.Sprintf("unsupported SCRAM channel-binding type %q", typ)}
		}
	default:
		return nil, fmt.Errorf("malformed SCRAM message (unexpected channel-binding flag %q)", flag)
	}
	authzid, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, errors.New("malformed SCRAM message (missing authorization identity)")
	}
	if authzid != "" {
		return nil, errors.New("client uses authorization identity, but it is not supported")
	}
	c.gs2Header = flag + "," + authzid + ","
	c.clientFirstBare = bare
	attrs := strings.Split(bare, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") {
		return nil, errors.New("malformed SCRAM message (expected user name and nonce)")
	}
	clientNonce := attrs[1][2:]
	if clientNonce == "" || !printable(clientNonce) {
		return nil, errors.New("malformed SCRAM message (invalid client nonce)")
	}
	serverNonce, err := c.serverNonce()
	if err != nil {
		return nil, err
	}
	c.nonce = clientNonce + serverNonce
	c.serverFirst = fmt.Sprintf("r=%s,s=%s,i=%d", c.nonce, base64.StdEncoding.EncodeToString(c.v.Salt), c.v.Iterations)
	return []byte(c.serverFirst), nil
}

func (c *Conversation) final(msg string) ([]byte, error) {
	withoutProof, proofAttr, ok := cutLast(msg, ",p=")
	if !ok {
		return nil, errors.New("malformed SCRAM message (missing proof)")
	}
	attrs := strings.Split(withoutProof, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "c=") || !strings.HasPrefix(attrs[1], "r=") {
		return nil, errors.New("malformed SCRAM message (expected channel binding and nonce)")
	}
	want := []byte(c.gs2Header)
	if strings.HasPrefix(c.gs2Header, "p=") {
		want = append(want, c.endPoint...)
	}
	cbind, err := base64.StdEncoding.DecodeString(attrs[0][2:])
	if err != nil || subtle.ConstantTimeCompare(cbind, want) != 1 {
		return nil, &Error{Message: "SCRAM channel binding check failed"}
	}
	if attrs[1][2:] != c.nonce {
		return nil, errors.New("SCRAM nonce does not match")
	}
	proof, err := base64.StdEncoding.DecodeString(proofAttr)
	if err != nil || len(proof) != sha256.Size {
		return nil, errors.New("malformed SCRAM message (invalid proof)")
	}
	authMessage := c.clientFirstBare + "," + c.serverFirst + "," + withoutProof
	if c.v.StoredKey == nil {
		return nil, ErrFailed
	}
	sig := mac(c.v.StoredKey, authMessage)
	clientKey := make([]byte, sha256.Size)
	for i := range clientKey {
		clientKey[i] = proof[i] ^ sig[i]
	}
	stored := sha256.Sum256(clientKey)
	if subtle.ConstantTimeCompare(stored[:], c.v.StoredKey) != 1 {
		return nil, ErrFailed
	}
	serverSig := mac(c.v.ServerKey, authMessage)
	return []byte("v=" + base64.StdEncoding.EncodeToString(serverSig)), nil
}

// TLSServerEndPoint returns the tls-server-end-point channel binding data
// of a server certificate (RFC 5929 section 4.1): its hash under the hash
// function of its signature algorithm, SHA-256 in place of MD5 and SHA-1.
func TLSServerEndPoint(cert *x509.Certificate) ([]byte, error) {
	var h hash.Hash
	switch cert.SignatureAlgorithm {
	case x509.MD5WithRSA, x509.SHA1WithRSA, x509.ECDSAWithSHA1, x509.DSAWithSHA1,
		x509.SHA256WithRSA, x509.SHA256WithRSAPSS, x509.ECDSAWithSHA256, x509.DSAWithSHA256:
		h = sha256.New()
	case x509.SHA384WithRSA, x509.SHA384WithRSAPSS, x509.ECDSAWithSHA384:
		h = sha512.New384()
	case x509.SHA512WithRSA, x509.SHA512WithRSAPSS, x509.ECDSAWithSHA512:
		h = sha512.New()
	default:
		return nil, fmt.Errorf("tls-server-end-point is undefined for certificates signed with %v", cert.SignatureAlgorithm)
	}
	h.Write(cert.Raw)
	return h.Sum(nil), nil
}

// cutLast cuts s around the last occurrence of sep.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// printable reports whether s holds only printable ASCII other than ','
// (RFC 5802's nonce characters).
func printable(s string) bool {
	return bytes.IndexFunc([]byte(s), func(r rune) bool { return r < 0x21 || r > 0x7e || r == ',' }) < 0
}
