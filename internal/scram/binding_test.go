package scram

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"
)

// selfSigned returns a certificate signed with alg.
func selfSigned(t *testing.T, curve elliptic.Curve, alg x509.SignatureAlgorithm) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(curve, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "s"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), SignatureAlgorithm: alg}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestTLSServerEndPoint(t *testing.T) {
	c256 := selfSigned(t, elliptic.P256(), x509.ECDSAWithSHA256)
	got, err := TLSServerEndPoint(c256)
	if want := sha256.Sum256(c256.Raw); err != nil || string(got) != string(want[:]) {
		t.Errorf("ECDSA-SHA256: %x, %v", got, err)
	}
	c384 := selfSigned(t, elliptic.P384(), x509.ECDSAWithSHA384)
	got, err = TLSServerEndPoint(c384)
	if want := sha512.Sum384(c384.Raw); err != nil || string(got) != string(want[:]) {
		t.Errorf("ECDSA-SHA384: %x, %v", got, err)
	}
}

// bindingFirst returns the error of a client-first message under a
// binding configuration.
func bindingFirst(plus bool, endPoint []byte, msg string) error {
	c := NewConversation(MockVerifier("u", []byte("k")))
	c.Bind(plus, endPoint)
	_, err := c.Step([]byte(msg))
	return err
}

func TestChannelBinding(t *testing.T) {
	ep := []byte("end point data")
	for _, c := range []struct {
		plus     bool
		endPoint []byte
		msg      string
		want     string // empty: accepted
		authz    bool
	}{
		{true, ep, "p=tls-server-end-point,,n=,r=abc", "", false},
		{false, ep, "n,,n=,r=abc", "", false},
		{false, nil, "y,,n=,r=abc", "", false},
		{false, ep, "y,,n=,r=abc", "SCRAM channel binding negotiation error", true},
		{true, ep, "n,,n=,r=abc", "does not include channel binding data", false},
		{true, ep, "y,,n=,r=abc", "does not include channel binding data", false},
		{false, ep, "p=tls-server-end-point,,n=,r=abc", "includes channel binding data", false},
		{true, ep, "p=tls-unique,,n=,r=abc", `unsupported SCRAM channel-binding type "tls-unique"`, false},
	} {
		err := bindingFirst(c.plus, c.endPoint, c.msg)
		var se *Error
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q (plus %v): %v", c.msg, c.plus, err)
		case c.want != "" && (!errors.As(err, &se) || !strings.Contains(err.Error(), c.want) || se.Authorization != c.authz):
			t.Errorf("%q (plus %v): %v, want %q (authorization %v)", c.msg, c.plus, err, c.want, c.authz)
		}
	}

	// The final message must carry the GS2 header and the binding data.
	final := func(cbind []byte) error {
		c := NewConversation(MockVerifier("u", []byte("k")))
		c.Bind(true, ep)
		first, err := c.Step([]byte("p=tls-server-end-point,,n=,r=abc"))
		if err != nil {
			t.Fatal(err)
		}
		nonce, _, _ := strings.Cut(strings.TrimPrefix(string(first), "r="), ",")
		_, err = c.Step([]byte("c=" + base64.StdEncoding.EncodeToString(cbind) + ",r=" + nonce + ",p=" + base64.StdEncoding.EncodeToString(make([]byte, 32))))
		return err
	}
	// With the right binding the exchange reaches the proof (which the
	// mock verifier fails); with another it stops at the binding.
	if err := final(append([]byte("p=tls-server-end-point,,"), ep...)); !errors.Is(err, ErrFailed) {
		t.Errorf("the right binding: %v, want ErrFailed", err)
	}
	for _, bad := range [][]byte{[]byte("p=tls-server-end-point,,"), append([]byte("p=tls-server-end-point,,"), "other data"...), []byte("n,,")} {
		if err := final(bad); err == nil || !strings.Contains(err.Error(), "SCRAM channel binding check failed") {
			t.Errorf("binding %q: %v", bad, err)
		}
	}
}
