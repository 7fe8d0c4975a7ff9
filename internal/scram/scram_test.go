package scram

import (
	"encoding/base64"
	"errors"
	"testing"
)

// TestRFC7677 replays the SCRAM-SHA-256 example exchange of RFC 7677
// section 3 (user "user", password "pencil").
func TestRFC7677(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	v, err := DeriveVerifier("pencil", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := ParseVerifier(v.String())
	if err != nil || parsed.String() != v.String() {
		t.Fatalf("verifier does not round-trip: %v %v", parsed, err)
	}
	c := NewConversation(parsed)
	c.serverNonce = func() (string, error) { return "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0", nil }
	first, err := c.Step([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"; string(first) != want {
		t.Fatalf("server-first = %s, want %s", first, want)
	}
	final, err := c.Step([]byte("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="; string(final) != want {
		t.Fatalf("server-final = %s, want %s", final, want)
	}
	if !v.CheckPassword("pencil") || v.CheckPassword("pencil ") {
		t.Fatal("CheckPassword")
	}
}

func TestWrongProofAndMalformedMessages(t *testing.T) {
	v, err := NewVerifier("secret")
	if err != nil {
		t.Fatal(err)
	}
	c := NewConversation(v)
	first, err := c.Step([]byte("n,,n=,r=abc"))
	if err != nil {
		t.Fatal(err)
	}
	nonce := string(first[2:len(first)])
	for i := range nonce {
		if nonce[i] == ',' {
			nonce = nonce[:i]
			break
		}
	}
	_, err = c.Step([]byte("c=biws,r=" + nonce + ",p=" + base64.StdEncoding.EncodeToString(make([]byte, 32))))
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("wrong proof: %v", err)
	}
	for _, msg := range []string{"", "x", "p=tls-server-end-point,,n=,r=a", "n,a=admin,n=,r=a", "n,,r=a", "n,,n=,r="} {
		if _, err := NewConversation(v).Step([]byte(msg)); err == nil || errors.Is(err, ErrFailed) {
			t.Errorf("client-first %q: %v", msg, err)
		}
	}
	// A mock verifier fails every proof.
	m := NewConversation(MockVerifier("ghost", []byte("k")))
	if _, err := m.Step([]byte("n,,n=,r=abc")); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Step([]byte("c=biws,r=abc,p=" + base64.StdEncoding.EncodeToString(make([]byte, 32)))); err == nil {
		t.Fatal("mock verifier accepted a proof")
	}
	for _, s := range []string{"", "SCRAM-SHA-256$x:abc$def:ghi", "md5abc", "SCRAM-SHA-256$4096:c2FsdA==$aGk=:aGk="} {
		if IsVerifier(s) {
			t.Errorf("IsVerifier(%q)", s)
		}
	}
}

func TestSASLprep(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain ascii", "plain ascii"},
		{"I\u00ADX", "IX"},                   // soft hyphen maps to nothing
		{"user\u00A0pass", "user pass"},      // non-ASCII space
		{"\u2168", "IX"},                     // ROMAN NUMERAL NINE, NFKC
		{"\u00AA", "a"},                      // FEMININE ORDINAL INDICATOR, NFKC
		{"a\u0007b\u00e9", "a\u0007b\u00e9"}, // prohibited: used as is
		{"\u0627\u0031", "\u0627\u0031"},     // RandALCat not at both ends: as is
		{"\u0627\u0031\u0628", "\u0627\u0031\u0628"},
		{"\xff\xfe", "\xff\xfe"}, // not UTF-8
	} {
		if got := saslprep(tc.in); got != tc.want {
			t.Errorf("saslprep(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
