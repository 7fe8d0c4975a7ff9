package oidc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Reload bounds of a KeySet.
const (
	// MinRefresh is the least time between two loads prompted by tokens
	// naming unknown keys, so that such tokens cannot make the server
	// hammer the issuer.
	MinRefresh = 30 * time.Second
	// MaxAge is how long a loaded set is used before it is loaded again.
	MaxAge = 10 * time.Minute
	// maxJWKSBytes bounds a key set document.
	maxJWKSBytes = 1 << 20
)

// KeySet is a JSON Web Key Set read from a file or an http(s) URL. Its
// methods are safe for concurrent use.
type KeySet struct {
	source string
	client *http.Client
	// minRefresh and maxAge are MinRefresh and MaxAge (tests shorten
	// them).
	minRefresh, maxAge time.Duration

	mu       sync.Mutex
	keys     []Key
	loaded   time.Time
	lastLoad time.Time
}

// NewKeySet reads the set at source (a file path, an https:// URL, or an
// http:// URL of a loopback address) once, so that a wrong source fails
// at once.
func NewKeySet(ctx context.Context, source string) (*KeySet, error) {
	if strings.HasPrefix(source, "http://") {
		u, err := url.Parse(source)
		if err != nil {
			return nil, err
		}
		ip := net.ParseIP(u.Hostname())
		if u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, fmt.Errorf("the key set must come over https:// (http:// only from a loopback address): a key set read in plain text can be replaced on the way")
		}
	}
	ks := &KeySet{source: source, client: &http.Client{Timeout: 5 * time.Second}, minRefresh: MinRefresh, maxAge: MaxAge}
	keys, err := ks.fetch(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	ks.keys, ks.loaded, ks.lastLoad = keys, now, now
	return ks, nil
}

func (ks *KeySet) isURL() bool {
	return strings.HasPrefix(ks.source, "https://") || strings.HasPrefix(ks.source, "http://")
}

func (ks *KeySet) fetch(ctx context.Context) ([]Key, error) {
	var data []byte
	if ks.isURL() {
		req, err := http.NewRequestWithContext(ctx, "GET", ks.source, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := ks.client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("fetching the key set: %w", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("fetching the key set from %s: HTTP %s", ks.source, resp.Status)
		}
		data, err = io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
		if err != nil {
			return nil, fmt.Errorf("fetching the key set: %w", err)
		}
	} else {
		var err error
		if data, err = os.ReadFile(ks.source); err != nil {
			return nil, fmt.Errorf("reading the key set: %w", err)
		}
	}
	if len(data) > maxJWKSBytes {
		return nil, errors.New("the key set is larger than 1MB")
	}
	keys, err := ParseJWKS(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ks.source, err)
	}
	return keys, nil
}

// current returns the keys, loading them again when they are older than
// MaxAge (or, with stale, when the last load is older than MinRefresh).
// A failed reload keeps the keys there are.
func (ks *KeySet) current(ctx context.Context, stale bool) []Key {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	now := time.Now()
	if now.Sub(ks.loaded) < ks.maxAge && (!stale || now.Sub(ks.lastLoad) < ks.minRefresh) {
		return ks.keys
	}
	ks.lastLoad = now
	if keys, err := ks.fetch(ctx); err == nil {
		ks.keys, ks.loaded = keys, now
	}
	return ks.keys
}

// Verify checks token against the set's keys at now, loading the set
// again once when the token names a key it does not know.
func (ks *KeySet) Verify(ctx context.Context, token string, cfg Config, now time.Time) (*Claims, error) {
	c, err := Verify(token, ks.current(ctx, false), cfg, now)
	var e *Error
	if errors.As(err, &e) && e.UnknownKey {
		c, err = Verify(token, ks.current(ctx, true), cfg, now)
	}
	return c, err
}
