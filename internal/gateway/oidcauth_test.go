package gateway

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/oidc"
	"github.com/rockstream/rockstream/internal/oidc/oidctest"
)

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestOIDCAuth: with the oidc method the password is a bearer token,
// verified against a key set served over HTTP on loopback (and read from
// a file); pgx and psql log in with a good RS256 or ES256 token, and
// expired, wrongly signed, wrong-audience, wrong-issuer tokens and tokens
// for another role are refused, the reason logged.
func TestOIDCAuth(t *testing.T) {
	const issuerURL, audience = "https://idp.test", "rockstream-test"
	is, err := oidctest.NewIssuer(issuerURL, "k1-")
	if err != nil {
		t.Fatal(err)
	}
	impostor, err := oidctest.NewIssuer(issuerURL, "k1-")
	if err != nil {
		t.Fatal(err)
	}
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(is.JWKS())
	}))
	defer jwks.Close()
	file := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(file, is.JWKS(), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenCfg := oidc.Config{Issuer: issuerURL, Audience: audience, RoleClaim: "preferred_username", Leeway: 5 * time.Second}
	claims := func(role string, edit func(map[string]any)) map[string]any {
		c := is.Claims(audience, "preferred_username", role)
		if edit != nil {
			edit(c)
		}
		return c
	}
	for _, source := range []string{jwks.URL + "/keys", file} {
		keys, err := oidc.NewKeySet(context.Background(), source)
		if err != nil {
			t.Fatal(err)
		}
		var logs syncBuffer
		ts := startServer(t, Config{Auth: AuthConfig{Method: AuthOIDC, OIDC: &OIDCConfig{Keys: keys, Token: tokenCfg}},
			LoginThrottle: LoginThrottle{Base: time.Millisecond, Max: time.Millisecond},
			Logger:        slog.New(slog.NewTextHandler(&logs, nil))})
		for _, alg := range []string{"RS256", "ES256"} {
			kid := "k1-rsa"
			if alg == "ES256" {
				kid = "k1-ec"
			}
			c, err := connectErr(ts.dsn("alice", is.Sign(alg, kid, claims("alice", nil))))
			if err != nil {
				t.Fatalf("%s token from %s: %v", alg, source, err)
			}
			var user string
			if err := c.QueryRow(context.Background(), "SELECT current_user").Scan(&user); err != nil || user != "alice" {
				t.Fatalf("current_user = %q, %v", user, err)
			}
			c.Close(context.Background())
		}
		for name, c := range map[string]struct{ token, reason string }{
			"expired":          {is.Sign("RS256", "k1-rsa", claims("alice", func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() })), "expired at"},
			"wrongly signed":   {impostor.Sign("RS256", "k1-rsa", claims("alice", nil)), "signature does not verify"},
			"wrong audience":   {is.Sign("ES256", "k1-ec", claims("alice", func(c map[string]any) { c["aud"] = "someone-else" })), "audience"},
			"wrong issuer":     {is.Sign("RS256", "k1-rsa", claims("alice", func(c map[string]any) { c["iss"] = "https://evil.test" })), "issuer"},
			"another role":     {is.Sign("RS256", "k1-rsa", claims("bob", nil)), `does not name user \"alice\"`},
			"a plain password": {"hunter2", "three dot-separated parts"},
		} {
			_, err := connectErr(ts.dsn("alice", c.token))
			wantPgError(t, err, "28000", `OIDC authentication failed for user "alice"`)
			if !strings.Contains(logs.String(), c.reason) {
				t.Errorf("%s token: the log does not say %q:\n%s", name, c.reason, logs.String())
			}
		}
		if strings.Contains(logs.String(), "hunter2") {
			t.Error("the log shows a refused password")
		}
		psql, err := exec.LookPath("psql")
		if err != nil {
			continue
		}
		cmd := exec.Command(psql, "-X", "-At", "-c", "SELECT current_user", ts.conninfo("alice", "sslmode=disable"))
		cmd.Env = append(os.Environ(), "PGPASSWORD="+is.Sign("ES256", "k1-ec", claims("alice", nil)))
		if out, err := cmd.CombinedOutput(); err != nil || string(out) != "alice\n" {
			t.Errorf("psql with a token: %v\n%s", err, out)
		}
	}
}
