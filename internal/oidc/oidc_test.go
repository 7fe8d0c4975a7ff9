package oidc

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/oidc/oidctest"
)

const (
	issuerURL = "https://idp.example.com"
	audience  = "rockstream"
)

var cfg = Config{Issuer: issuerURL, Audience: audience, RoleClaim: "role", Leeway: 30 * time.Second}

func newIssuer(t *testing.T, prefix string) *oidctest.Issuer {
	t.Helper()
	is, err := oidctest.NewIssuer(issuerURL, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return is
}

func TestVerify(t *testing.T) {
	is := newIssuer(t, "k-")
	// Another issuer whose keys carry the same kids: its tokens name keys
	// the set has, and their signatures do not verify.
	impostor := newIssuer(t, "k-")
	keys, err := ParseJWKS(is.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claims := func(edit func(map[string]any)) map[string]any {
		c := is.Claims(audience, "role", "alice")
		if edit != nil {
			edit(c)
		}
		return c
	}
	for _, c := range []struct {
		name, token string
		want        string // empty: accepted
	}{
		{"RS256", is.Sign("RS256", "k-rsa", claims(nil)), ""},
		{"PS256", is.Sign("PS256", "k-rsa", claims(nil)), ""},
		{"ES256", is.Sign("ES256", "k-ec", claims(nil)), ""},
		{"no kid", is.Sign("ES256", "", claims(nil)), ""},
		{"audience list", is.Sign("RS256", "k-rsa", claims(func(c map[string]any) { c["aud"] = []string{"other", audience} })), ""},
		{"role list", is.Sign("RS256", "k-rsa", claims(func(c map[string]any) { c["role"] = []string{"alice", "bob"} })), ""},
		{"expired within the leeway", is.Sign("RS256", "k-rsa", claims(func(c map[string]any) { c["exp"] = now.Add(-10 * time.Second).Unix() })), ""},
		{"expired", is.Sign("RS256", "k-rsa", claims(func(c map[string]any) { c["exp"] = now.Add(-time.Hour).Unix() })), "expired at"},
		{"no exp", is.Sign("RS256", "k-rsa", claims(func(c map[string]any) { delete(c, "exp") })), "no expiry"},
		{"not yet valid", is.Sign("ES256", "k-ec", claims(func(c map[string]any) { c["nbf"] = now.Add(time.Hour).Unix() })), "not valid before"},
		{"wrong audience", is.Sign("RS256", "k-rsa", claims(func(c map[string]any) { c["aud"] = "other" })), `audience other does not include "rockstream"`},
		{"no audience", is.Sign("RS256", "k-rsa", claims(func(c map[string]any) { delete(c, "aud") })), "audience"},
		{"wrong issuer", is.Sign("RS256", "k-rsa", claims(func(c map[string]any) { c["iss"] = "https://evil.example.com" })), `issuer "https://evil.example.com" is not`},
		{"no role claim", is.Sign("RS256", "k-rsa", claims(func(c map[string]any) { delete(c, "role") })), `no claim "role"`},
		{"role claim a number", is.Sign("RS256", "k-rsa", claims(func(c map[string]any) { c["role"] = 7 })), "not a string"},
		{"signed by another key, RS256", impostor.Sign("RS256", "k-rsa", claims(nil)), "signature does not verify"},
		{"signed by another key, ES256", impostor.Sign("ES256", "k-ec", claims(nil)), "signature does not verify"},
		{"RS256 header, EC key", is.Sign("RS256", "k-ec", claims(nil)), `no RS256 key "k-ec"`},
		{"unknown kid", is.Sign("RS256", "k-new", claims(nil)), `no RS256 key "k-new"`},
		{"not a JWT", "secret password", "three dot-separated parts"},
	} {
		got, err := Verify(c.token, keys, cfg, now)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && (len(got.Roles) == 0 || got.Roles[0] != "alice"):
			t.Errorf("%s: roles %v", c.name, got.Roles)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}

	// Tampering: another payload under the same signature, alg none,
	// HMAC with the public key as secret.
	good := is.Sign("RS256", "k-rsa", claims(nil))
	parts := strings.Split(good, ".")
	other := strings.Split(is.Sign("RS256", "k-rsa", claims(func(c map[string]any) { c["role"] = "root" })), ".")
	enc := base64.RawURLEncoding.EncodeToString
	for name, tok := range map[string]string{
		"swapped payload": parts[0] + "." + other[1] + "." + parts[2],
		"alg none":        enc([]byte(`{"alg":"none"}`)) + "." + parts[1] + ".",
		"alg HS256":       enc([]byte(`{"alg":"HS256","kid":"k-rsa"}`)) + "." + parts[1] + "." + parts[2],
		"crit":            enc([]byte(`{"alg":"RS256","crit":["exp"]}`)) + "." + parts[1] + "." + parts[2],
	} {
		if _, err := Verify(tok, keys, cfg, now); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	var e *Error
	if _, err := Verify(is.Sign("RS256", "k-new", claims(nil)), keys, cfg, now); !errors.As(err, &e) || !e.UnknownKey {
		t.Errorf("an unknown kid: %v, want UnknownKey", err)
	}
}

func TestParseJWKS(t *testing.T) {
	for _, bad := range []string{`nope`, `{"keys":[]}`, `{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`,
		`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`, `{"keys":[{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}]}`} {
		if _, err := ParseJWKS([]byte(bad)); err == nil {
			t.Errorf("ParseJWKS(%s) succeeded", bad)
		}
	}
}

// TestKeySet reads the set from a file and from an HTTP server; a token
// naming a key the server added since makes the set load again.
func TestKeySet(t *testing.T) {
	is := newIssuer(t, "a-")
	file := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(file, is.JWKS(), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fromFile, err := NewKeySet(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fromFile.Verify(ctx, is.Sign("ES256", "a-ec", is.Claims(audience, "role", "alice")), cfg, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := NewKeySet(ctx, filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file was accepted")
	}

	rotated := newIssuer(t, "b-")
	var served atomic.Pointer[[]byte]
	jwks := is.JWKS()
	served.Store(&jwks)
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write(*served.Load())
	}))
	defer srv.Close()
	fromURL, err := NewKeySet(ctx, srv.URL+"/jwks")
	if err != nil {
		t.Fatal(err)
	}
	fromURL.minRefresh = 0
	if _, err := fromURL.Verify(ctx, is.Sign("RS256", "a-rsa", is.Claims(audience, "role", "alice")), cfg, time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("%d fetches for a known key, want 1", n)
	}
	newJWKS := rotated.JWKS()
	served.Store(&newJWKS)
	if _, err := fromURL.Verify(ctx, rotated.Sign("RS256", "b-rsa", rotated.Claims(audience, "role", "alice")), cfg, time.Now()); err != nil {
		t.Fatalf("a rotated key: %v", err)
	}
	if n := fetches.Load(); n != 2 {
		t.Errorf("%d fetches after a key rotation, want 2", n)
	}
	// Within MinRefresh an unknown kid does not fetch again.
	fromURL.minRefresh = time.Hour
	if _, err := fromURL.Verify(ctx, is.Sign("RS256", "zz", is.Claims(audience, "role", "alice")), cfg, time.Now()); err == nil {
		t.Error("an unknown key was accepted")
	}
	if n := fetches.Load(); n != 2 {
		t.Errorf("%d fetches, want no more within MinRefresh", n)
	}
	if _, err := NewKeySet(ctx, "http://idp.example.com/jwks"); err == nil || !strings.Contains(err.Error(), "https://") {
		t.Errorf("a plain-text key set URL of another host: %v", err)
	}
	failing := httptest.NewServer(http.NotFoundHandler())
	defer failing.Close()
	if _, err := NewKeySet(ctx, failing.URL); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a key set URL answering 404: %v", err)
	}
}
