// Package oidctest is a token issuer for tests of OIDC authentication: it
// holds fresh RSA and ECDSA keys, publishes them as a JSON Web Key Set,
// and signs tokens with them (RS256, PS256, ES256). Nothing it makes is
// meant to outlive a test.
package oidctest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"time"
)

// Issuer signs tokens.
type Issuer struct {
	URL       string
	KeyPrefix string // kid prefix, so that two issuers' kids can collide or not
	rsaKey    *rsa.PrivateKey
	ecKey     *ecdsa.PrivateKey
}

// NewIssuer returns an issuer with fresh keys whose kids are prefix+"rsa"
// and prefix+"ec".
func NewIssuer(url, prefix string) (*Issuer, error) {
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &Issuer{URL: url, KeyPrefix: prefix, rsaKey: rk, ecKey: ek}, nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// JWKS returns the issuer's public keys as a JSON Web Key Set.
func (is *Issuer) JWKS() []byte {
	const size = 32
	ec, err := is.ecKey.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		panic(err)
	}
	set := map[string]any{"keys": []map[string]string{
		{"kty": "RSA", "kid": is.KeyPrefix + "rsa", "use": "sig", "n": b64(is.rsaKey.N.Bytes()), "e": b64(big.NewInt(int64(is.rsaKey.E)).Bytes())},
		{"kty": "EC", "kid": is.KeyPrefix + "ec", "use": "sig", "crv": "P-256", "x": b64(ec[1 : 1+size]), "y": b64(ec[1+size:])},
	}}
	b, err := json.Marshal(set)
	if err != nil {
		panic(err)
	}
	return b
}

// Claims returns the usual claims of a token for role, valid for an hour.
func (is *Issuer) Claims(audience, roleClaim, role string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": is.URL, "aud": audience, "sub": "user-" + role, roleClaim: role,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// Sign signs claims with alg (RS256, PS256 or ES256) under the key of
// that type, naming kid in the header (empty: no kid).
func (is *Issuer) Sign(alg, kid string, claims map[string]any) string {
	header, err := json.Marshal(map[string]string{"alg": alg, "typ": "JWT", "kid": kid})
	if err != nil {
		panic(err)
	}
	if kid == "" {
		header, _ = json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		panic(err)
	}
	signed := b64(header) + "." + b64(payload)
	d := sha256.Sum256([]byte(signed))
	var sig []byte
	switch alg {
	case "RS256":
		sig, err = rsa.SignPKCS1v15(rand.Reader, is.rsaKey, crypto.SHA256, d[:])
	case "PS256":
		sig, err = rsa.SignPSS(rand.Reader, is.rsaKey, crypto.SHA256, d[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	case "ES256":
		var r, s *big.Int
		r, s, err = ecdsa.Sign(rand.Reader, is.ecKey, d[:])
		if err == nil {
			sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
		}
	default:
		panic(fmt.Sprintf("oidctest: cannot sign with %s", alg))
	}
	if err != nil {
		panic(err)
	}
	return signed + "." + b64(sig)
}
