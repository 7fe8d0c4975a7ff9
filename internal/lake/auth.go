package lake

import (
	"crypto/subtle"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/scram"
)

// Authentication methods, as rockstream start names them.
const (
	AuthTrust    = "trust"
	AuthPassword = "password"
	AuthSCRAM    = "scram-sha-256"
)

var errAuthFailed = errors.New("lake: password authentication failed")

// authenticate runs the configured method for user; on failure the
// client gets 28P01 and the session ends.
func (s *session) authenticate(user string) error {
	users := s.srv.cfg.Users
	switch s.srv.authMethod() {
	case AuthTrust:
		return nil
	case AuthPassword:
		s.be.Send(&pgproto3.AuthenticationCleartextPassword{})
		if err := s.be.Flush(); err != nil {
			return err
		}
		if err := s.be.SetAuthType(pgproto3.AuthTypeCleartextPassword); err != nil {
			return err
		}
		msg, err := s.be.Receive()
		if err != nil {
			return err
		}
		pw, ok := msg.(*pgproto3.PasswordMessage)
		want, known := users[user]
		if !ok || !known || subtle.ConstantTimeCompare([]byte(pw.Password), []byte(want)) != 1 {
			return s.authFailed(user)
		}
		return nil
	case AuthSCRAM:
		return s.authSCRAM(user)
	}
	return fmt.Errorf("lake: unknown authentication method %q", s.srv.cfg.Auth)
}

func (s *session) authFailed(user string) error {
	s.be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "28P01",
		Message: fmt.Sprintf("password authentication failed for user %q", user)})
	return errors.Join(errAuthFailed, s.be.Flush())
}

func (s *session) authSCRAM(user string) error {
	s.be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{scram.Mechanism}})
	if err := s.be.Flush(); err != nil {
		return err
	}
	if err := s.be.SetAuthType(pgproto3.AuthTypeSASL); err != nil {
		return err
	}
	msg, err := s.be.Receive()
	if err != nil {
		return err
	}
	init, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok || init.AuthMechanism != scram.Mechanism {
		return s.authFailed(user)
	}
	password, known := s.srv.cfg.Users[user]
	var v scram.Verifier
	if known {
		if v, err = scram.NewVerifier(password); err != nil {
			return err
		}
	} else {
		// The exchange goes on with a verifier no password matches, so
		// that a client cannot tell which users exist.
		v = scram.MockVerifier(user, s.srv.secret)
	}
	conv := scram.NewConversation(v)
	out, err := conv.Step(init.Data)
	if err != nil {
		return s.authFailed(user)
	}
	s.be.Send(&pgproto3.AuthenticationSASLContinue{Data: out})
	if err := s.be.Flush(); err != nil {
		return err
	}
	if err := s.be.SetAuthType(pgproto3.AuthTypeSASLContinue); err != nil {
		return err
	}
	if msg, err = s.be.Receive(); err != nil {
		return err
	}
	resp, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return s.authFailed(user)
	}
	out, err = conv.Step(resp.Data)
	if err != nil || !known {
		return s.authFailed(user)
	}
	s.be.Send(&pgproto3.AuthenticationSASLFinal{Data: out})
	return nil
}
