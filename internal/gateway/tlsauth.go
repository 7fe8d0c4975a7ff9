package gateway

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"

	"github.com/rockstream/rockstream/internal/errs"
)

// TLSRequire says which clients must use TLS, as pg_hba.conf's hostssl
// lines do.
type TLSRequire string

const (
	TLSRequireNone   TLSRequire = "none"   // TLS is the client's choice
	TLSRequireRemote TLSRequire = "remote" // clients not on loopback must use TLS
	TLSRequireAll    TLSRequire = "all"    // every client must use TLS
)

// tlsState returns the connection's TLS state; ok is false for a
// connection in plain text.
func (c *conn) tlsState() (st tls.ConnectionState, ok bool) {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return tls.ConnectionState{}, false
	}
	return tc.ConnectionState(), true
}

// checkTLSRequired refuses a plain-text connection the server requires to
// use TLS, with FATAL 28000.
func (c *conn) checkTLSRequired() error {
	req := c.srv.cfg.TLSRequire
	if req == "" || req == TLSRequireNone {
		return nil
	}
	if _, ok := c.tlsState(); ok {
		return nil
	}
	if req == TLSRequireRemote && isLocal(c.nc.RemoteAddr()) {
		return nil
	}
	host := c.nc.RemoteAddr().String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return &errs.Error{Code: errs.InvalidAuthorization, SQLState: "28000",
		Message: fmt.Sprintf("connection without TLS refused for host %q, user %q: this server requires TLS", host, c.user),
		Hint:    "connect with sslmode=require (or verify-ca, verify-full)"}
}

// authCert authenticates c.user by its TLS client certificate, which the
// server verified against its client CAs during the handshake: the
// certificate's common name must be the user name, as PostgreSQL's cert
// method requires.
func (c *conn) authCert() error {
	st, ok := c.tlsState()
	if !ok {
		return &errs.Error{Code: errs.InvalidAuthorization, SQLState: "28000",
			Message: fmt.Sprintf("certificate authentication failed for user %q: the connection does not use TLS", c.user),
			Hint:    "connect with sslmode=require (or verify-ca, verify-full), sslcert and sslkey"}
	}
	if len(st.VerifiedChains) == 0 || len(st.PeerCertificates) == 0 {
		return &errs.Error{Code: errs.InvalidAuthorization, SQLState: "28000",
			Message: "connection requires a valid client certificate"}
	}
	cn := st.PeerCertificates[0].Subject.CommonName
	if cn != c.user {
		return &errs.Error{Code: errs.InvalidAuthorization, SQLState: "28000",
			Message: fmt.Sprintf("certificate authentication failed for user %q", c.user),
			Detail:  fmt.Sprintf("The certificate's common name %q is not the user name.", cn)}
	}
	if err := c.trustedUser(); err != nil {
		return err
	}
	return c.checkLogin()
}

// ParseRevocationLists parses the PEM certificate revocation lists in
// data, each of which one of cas must have signed.
func ParseRevocationLists(data []byte, cas []*x509.Certificate) ([]*x509.RevocationList, error) {
	var out []*x509.RevocationList
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "X509 CRL" {
			continue
		}
		crl, err := x509.ParseRevocationList(block.Bytes)
		if err != nil {
			return nil, err
		}
		signed := false
		for _, ca := range cas {
			if crl.CheckSignatureFrom(ca) == nil {
				signed = true
				break
			}
		}
		if !signed {
			return nil, fmt.Errorf("the revocation list of %q is not signed by a client CA", crl.Issuer.String())
		}
		out = append(out, crl)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no PEM revocation list (X509 CRL)")
	}
	return out, nil
}

// RefuseRevoked returns a tls.Config.VerifyPeerCertificate function that
// fails the handshake of a client whose certificate, or an intermediate
// of its verified chain, a revocation list of its issuer lists, as
// PostgreSQL's ssl_crl_file does.
func RefuseRevoked(crls []*x509.RevocationList) func([][]byte, [][]*x509.Certificate) error {
	return func(_ [][]byte, chains [][]*x509.Certificate) error {
		for _, chain := range chains {
			for _, cert := range chain {
				for _, crl := range crls {
					if !bytes.Equal(crl.RawIssuer, cert.RawIssuer) {
						continue
					}
					for _, e := range crl.RevokedCertificateEntries {
						if e.SerialNumber.Cmp(cert.SerialNumber) == 0 {
							return fmt.Errorf("certificate %q (serial %s) is revoked", cert.Subject.CommonName, cert.SerialNumber)
						}
					}
				}
			}
		}
		return nil
	}
}
