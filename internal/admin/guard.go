package admin

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// guard wraps an endpoint that may require credentials: a bearer token
// (401 without it, 403 with a wrong one) or a verified client certificate
// (403 without one).
func (s *Server) guard(h http.Handler) http.Handler {
	if s.cfg.Token == "" && !s.cfg.RequireClientCert {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.RequireClientCert && (r.TLS == nil || len(r.TLS.VerifiedChains) == 0) {
			writeText(w, http.StatusForbidden, "a client certificate is required\n")
			return
		}
		if s.cfg.Token != "" {
			auth := r.Header.Get("Authorization")
			scheme, token, ok := strings.Cut(auth, " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") {
				w.Header().Set("WWW-Authenticate", `Bearer realm="rockstream"`)
				writeText(w, http.StatusUnauthorized, "a bearer token is required\n")
				return
			}
			if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(s.cfg.Token)) != 1 {
				writeText(w, http.StatusForbidden, "wrong bearer token\n")
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}
