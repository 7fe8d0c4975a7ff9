package admin

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rockstream/rockstream/internal/testcerts"
)

func fetchWith(t *testing.T, c *http.Client, url, token string) int {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestTokenGuard: with a token, /health and /metrics answer 401 without
// it and 403 with a wrong one; the probes need none.
func TestTokenGuard(t *testing.T) {
	s := New(Config{Version: "test", Token: "s3cr3t-token"})
	s.SetReady(true)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	c := ts.Client()
	for path, want := range map[string][3]int{
		"/health":  {401, 403, 200},
		"/metrics": {401, 403, 200},
		"/live":    {200, 200, 200},
		"/ready":   {200, 200, 200},
		// The console and the operator endpoints are guarded too; with
		// no engine (nor logs, nor storage) attached their API answers
		// 503 or 400 once let through.
		"/":             {401, 403, 200},
		"/console.js":   {401, 403, 200},
		"/api/catalog":  {401, 403, 503},
		"/admin/logs":   {401, 403, 400},
		"/admin/audit":  {401, 403, 400},
		"/no/such/page": {401, 403, 404},
	} {
		got := [3]int{fetchWith(t, c, ts.URL+path, ""), fetchWith(t, c, ts.URL+path, "wrong"), fetchWith(t, c, ts.URL+path, "s3cr3t-token")}
		if got != want {
			t.Errorf("%s without, with a wrong and with the right token: %v, want %v", path, got, want)
		}
	}
}

// TestClientCertGuard: with client certificates required, /health and
// /metrics answer only a client whose certificate the CA signed; a
// certificate of another CA is refused.
func TestClientCertGuard(t *testing.T) {
	ca, err := testcerts.NewCA("ops CA")
	if err != nil {
		t.Fatal(err)
	}
	other, err := testcerts.NewCA("other CA")
	if err != nil {
		t.Fatal(err)
	}
	serverCert, err := ca.Issue(testcerts.Options{CommonName: "server", Server: true})
	if err != nil {
		t.Fatal(err)
	}
	good, err := ca.Issue(testcerts.Options{CommonName: "prometheus"})
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := other.Issue(testcerts.Options{CommonName: "prometheus"})
	if err != nil {
		t.Fatal(err)
	}
	s := New(Config{Version: "test", RequireClientCert: true})
	s.SetReady(true)
	ts := httptest.NewUnstartedServer(s.Handler())
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert.TLS}, ClientCAs: ca.Pool(), ClientAuth: tls.VerifyClientCertIfGiven}
	ts.StartTLS()
	defer ts.Close()
	client := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), Certificates: certs}}}
	}
	if code := fetchWith(t, client(), ts.URL+"/metrics", ""); code != 403 {
		t.Errorf("/metrics without a certificate: %d, want 403", code)
	}
	if code := fetchWith(t, client(), ts.URL+"/ready", ""); code != 200 {
		t.Errorf("/ready without a certificate: %d, want 200", code)
	}
	for _, path := range []string{"/metrics", "/health"} {
		if code := fetchWith(t, client(good.TLS), ts.URL+path, ""); code != 200 {
			t.Errorf("%s with a good certificate: %d, want 200", path, code)
		}
	}
	req, _ := http.NewRequest("GET", ts.URL+"/metrics", nil)
	// The Go client does not even send a certificate the server's list of
	// CAs does not name; either way it is refused.
	if resp, err := client(stranger.TLS).Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("a certificate of another CA got %d", resp.StatusCode)
		}
	}
}
