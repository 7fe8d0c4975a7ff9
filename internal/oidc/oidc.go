// Package oidc verifies OpenID Connect bearer tokens (JSON Web Tokens,
// RFC 7519, signed as RFC 7515 describes) against the issuer's JSON Web
// Key Set (RFC 7517), for the gateway's oidc authentication method: the
// client sends the token as its password.
//
// A token is accepted only when all of these hold: it is a compact JWS of
// three parts; its header's alg is an asymmetric algorithm this package
// verifies (RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384,
// ES512; never "none" nor an HMAC); a key of the set whose type, curve,
// algorithm and use fit (the one its kid names, when it names one)
// verifies the signature; iss is the configured issuer; aud is, or
// contains, the configured audience; exp is present and not past; nbf,
// when present, is not in the future (both with Leeway of clock skew);
// and the role claim is a string or a list of strings. The signature
// checks are the standard library's (crypto/rsa, crypto/ecdsa): nothing
// here is a cryptographic primitive of its own.
//
// Verify is pure given the key set and the time; KeySet reads the set
// from a file or an HTTPS URL and reloads it when a token names a key it
// does not know (at most every MinRefresh) or when it is older than
// MaxAge.
package oidc

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"
)

// Key is one verification key of a key set.
type Key struct {
	ID  string // kid; may be empty
	Alg string // alg; empty means any algorithm of the key's type
	Use string // use; empty or "sig"
	Pub crypto.PublicKey
}

// ParseJWKS parses a JSON Web Key Set. Keys of types or curves this
// package does not verify (symmetric "oct" keys, OKP) and keys meant for
// encryption are skipped; a set without any usable key is an error.
func ParseJWKS(data []byte) ([]Key, error) {
	var set struct {
		Keys []struct {
			Kty, Kid, Alg, Use, Crv string
			N, E, X, Y              string
		} `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("the key set is not JSON: %v", err)
	}
	var out []Key
	for i, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		key := Key{ID: k.Kid, Alg: k.Alg, Use: k.Use}
		switch k.Kty {
		case "RSA":
			n, err1 := b64(k.N)
			e, err2 := b64(k.E)
			if err1 != nil || err2 != nil || len(n) == 0 || len(e) == 0 || len(e) > 4 {
				return nil, fmt.Errorf("key %d (%q): malformed RSA key", i, k.Kid)
			}
			pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
			if pub.N.BitLen() < 2048 {
				return nil, fmt.Errorf("key %d (%q): an RSA key of %d bits is too weak; at least 2048 are needed", i, k.Kid, pub.N.BitLen())
			}
			key.Pub = pub
		case "EC":
			curve := curveOf(k.Crv)
			if curve == nil {
				continue
			}
			x, err1 := b64(k.X)
			y, err2 := b64(k.Y)
			size := (curve.Params().BitSize + 7) / 8
			if err1 != nil || err2 != nil || len(x) != size || len(y) != size {
				return nil, fmt.Errorf("key %d (%q): malformed EC key", i, k.Kid)
			}
			point := append(append([]byte{4}, x...), y...)
			pub, err := ecdsa.ParseUncompressedPublicKey(curve, point)
			if err != nil {
				return nil, fmt.Errorf("key %d (%q): %v", i, k.Kid, err)
			}
			key.Pub = pub
		default:
			continue
		}
		out = append(out, key)
	}
	if len(out) == 0 {
		return nil, errors.New("the key set holds no RSA or EC signature key")
	}
	return out, nil
}

func curveOf(crv string) elliptic.Curve {
	switch crv {
	case "P-256":
		return elliptic.P256()
	case "P-384":
		return elliptic.P384()
	case "P-521":
		return elliptic.P521()
	}
	return nil
}

func b64(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// Config is what a token must satisfy.
type Config struct {
	Issuer   string
	Audience string
	// RoleClaim names the claim that holds the role (or roles) the token
	// may log in as.
	RoleClaim string
	// Leeway is the clock skew allowed around exp and nbf.
	Leeway time.Duration
}

// Claims is what Verify returns of an accepted token.
type Claims struct {
	Subject string
	// Roles are the role claim's values.
	Roles   []string
	Expires time.Time
}

// Error is a refused token; its message says why, for the server's log.
// UnknownKey marks a token naming a key the set does not have: the set
// may be stale.
type Error struct {
	Reason     string
	UnknownKey bool
}

func (e *Error) Error() string { return "token refused: " + e.Reason }

func refuse(format string, args ...any) error { return &Error{Reason: fmt.Sprintf(format, args...)} }

// Verify checks token against keys and cfg at now.
func Verify(token string, keys []Key, cfg Config, now time.Time) (*Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, refuse("not a signed JWT (want three dot-separated parts)")
	}
	headerJSON, err := b64(parts[0])
	if err != nil {
		return nil, refuse("malformed header")
	}
	var header struct {
		Alg, Kid, Typ string
		Crit          []string
	}
	if err := json.Unmarshal(headerJSON, &header); err != nil {
		return nil, refuse("malformed header")
	}
	if len(header.Crit) > 0 {
		return nil, refuse("critical header parameters %q are not understood", header.Crit)
	}
	alg, ok := algorithms[header.Alg]
	if !ok {
		return nil, refuse("algorithm %q is not accepted", header.Alg)
	}
	sig, err := b64(parts[2])
	if err != nil {
		return nil, refuse("malformed signature")
	}
	signed := []byte(parts[0] + "." + parts[1])
	verified, candidates := false, 0
	for _, k := range keys {
		if (header.Kid != "" && k.ID != header.Kid) || (k.Alg != "" && k.Alg != header.Alg) || !alg.fits(k.Pub) {
			continue
		}
		candidates++
		if alg.verify(k.Pub, signed, sig) {
			verified = true
			break
		}
	}
	switch {
	case candidates == 0 && header.Kid != "":
		return nil, &Error{Reason: fmt.Sprintf("no %s key %q in the key set", header.Alg, header.Kid), UnknownKey: true}
	case candidates == 0:
		return nil, refuse("no %s key in the key set", header.Alg)
	case !verified:
		return nil, refuse("the signature does not verify")
	}
	payload, err := b64(parts[1])
	if err != nil {
		return nil, refuse("malformed payload")
	}
	var claims map[string]any
	dec := json.NewDecoder(strings.NewReader(string(payload)))
	dec.UseNumber()
	if err := dec.Decode(&claims); err != nil {
		return nil, refuse("malformed payload")
	}
	if iss, _ := claims["iss"].(string); iss != cfg.Issuer {
		return nil, refuse("issuer %q is not %q", iss, cfg.Issuer)
	}
	if !hasAudience(claims["aud"], cfg.Audience) {
		return nil, refuse("audience %v does not include %q", claims["aud"], cfg.Audience)
	}
	exp, ok := numericDate(claims["exp"])
	if !ok {
		return nil, refuse("no expiry (exp)")
	}
	if !now.Before(exp.Add(cfg.Leeway)) {
		return nil, refuse("expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if v, present := claims["nbf"]; present {
		nbf, ok := numericDate(v)
		if !ok {
			return nil, refuse("malformed nbf")
		}
		if now.Add(cfg.Leeway).Before(nbf) {
			return nil, refuse("not valid before %s", nbf.UTC().Format(time.RFC3339))
		}
	}
	out := &Claims{Expires: exp}
	out.Subject, _ = claims["sub"].(string)
	switch v := claims[cfg.RoleClaim].(type) {
	case string:
		out.Roles = []string{v}
	case []any:
		for _, r := range v {
			s, ok := r.(string)
			if !ok {
				return nil, refuse("claim %q is not a string or a list of strings", cfg.RoleClaim)
			}
			out.Roles = append(out.Roles, s)
		}
	case nil:
		return nil, refuse("no claim %q", cfg.RoleClaim)
	default:
		return nil, refuse("claim %q is not a string or a list of strings", cfg.RoleClaim)
	}
	return out, nil
}

func hasAudience(v any, want string) bool {
	switch a := v.(type) {
	case string:
		return a == want
	case []any:
		for _, x := range a {
			if s, ok := x.(string); ok && s == want {
				return true
			}
		}
	}
	return false
}

func numericDate(v any) (time.Time, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return time.Time{}, false
	}
	f, err := n.Float64()
	if err != nil {
		return time.Time{}, false
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)), true
}

// algorithm is one accepted JWS algorithm.
type algorithm struct {
	hash  crypto.Hash
	pss   bool
	curve elliptic.Curve // for ECDSA; nil for RSA
}

var algorithms = map[string]algorithm{
	"RS256": {hash: crypto.SHA256}, "RS384": {hash: crypto.SHA384}, "RS512": {hash: crypto.SHA512},
	"PS256": {hash: crypto.SHA256, pss: true}, "PS384": {hash: crypto.SHA384, pss: true}, "PS512": {hash: crypto.SHA512, pss: true},
	"ES256": {hash: crypto.SHA256, curve: elliptic.P256()}, "ES384": {hash: crypto.SHA384, curve: elliptic.P384()},
	"ES512": {hash: crypto.SHA512, curve: elliptic.P521()},
}

func (a algorithm) fits(pub crypto.PublicKey) bool {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return a.curve == nil
	case *ecdsa.PublicKey:
		return a.curve != nil && k.Curve == a.curve
	}
	return false
}

func (a algorithm) digest(msg []byte) []byte {
	switch a.hash {
	case crypto.SHA384:
		d := sha512.Sum384(msg)
		return d[:]
	case crypto.SHA512:
		d := sha512.Sum512(msg)
		return d[:]
	}
	d := sha256.Sum256(msg)
	return d[:]
}

func (a algorithm) verify(pub crypto.PublicKey, msg, sig []byte) bool {
	d := a.digest(msg)
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if a.pss {
			return rsa.VerifyPSS(k, a.hash, d, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash}) == nil
		}
		return rsa.VerifyPKCS1v15(k, a.hash, d, sig) == nil
	case *ecdsa.PublicKey:
		// JWS carries R and S as two big-endian integers of the curve's
		// size, not in ASN.1.
		size := (k.Curve.Params().BitSize + 7) / 8
		if len(sig) != 2*size {
			return false
		}
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		return ecdsa.Verify(k, d, r, s)
	}
	return false
}
