package gateway

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/instance"
)

func connectErr(dsn string) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return pgx.Connect(ctx, dsn)
}

// wantPgError checks that err is a server error with code and message.
func wantPgError(t *testing.T, err error, code, msg string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errorsAs(err, &pe) {
		t.Fatalf("got %v, want server error %s", err, code)
	}
	if pe.Code != code || (msg != "" && pe.Message != msg) {
		t.Fatalf("got %s %q, want %s %q", pe.Code, pe.Message, code, msg)
	}
}

func TestPasswordAuth(t *testing.T) {
	for _, method := range []AuthMethod{AuthPassword, AuthSCRAM} {
		t.Run(string(method), func(t *testing.T) {
			ts := startServer(t, Config{Auth: AuthConfig{Method: method, Users: map[string]string{"alice": "s3cret"}}})
			c, err := connectErr(ts.dsn("alice", "s3cret"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(context.Background())
			if _, err := c.Exec(context.Background(), "SELECT 1"); err != nil {
				t.Fatal(err)
			}
			_, err = connectErr(ts.dsn("alice", "wrong"))
			wantPgError(t, err, "28P01", `password authentication failed for user "alice"`)
			_, err = connectErr(ts.dsn("nobody", "x"))
			wantPgError(t, err, "28P01", `password authentication failed for user "nobody"`)

			// Roles created in SQL log in with their password, stored as
			// a SCRAM verifier.
			ctx := context.Background()
			for _, q := range []string{
				"CREATE ROLE bob WITH LOGIN PASSWORD 'pw1'",
				"CREATE USER carol PASSWORD 'pw2'",
				"CREATE ROLE dave PASSWORD 'pw3'",
			} {
				if _, err := c.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			_, err = c.Exec(ctx, "CREATE ROLE bob LOGIN")
			wantPgError(t, err, "42710", `role "bob" already exists`)
			for user, pw := range map[string]string{"bob": "pw1", "carol": "pw2"} {
				rc, err := connectErr(ts.dsn(user, pw))
				if err != nil {
					t.Fatalf("%s: %v", user, err)
				}
				var who string
				if err := rc.QueryRow(ctx, "SHOW application_name").Scan(&who); err != nil {
					t.Fatal(err)
				}
				if got := rc.PgConn().ParameterStatus("session_authorization"); got != user {
					t.Errorf("session_authorization = %q, want %q", got, user)
				}
				rc.Close(ctx)
			}
			_, err = connectErr(ts.dsn("dave", "pw3"))
			wantPgError(t, err, "28000", `role "dave" is not permitted to log in`)
			if _, err := c.Exec(ctx, "ALTER ROLE bob WITH PASSWORD 'pw9'"); err != nil {
				t.Fatal(err)
			}
			_, err = connectErr(ts.dsn("bob", "pw1"))
			wantPgError(t, err, "28P01", "")
			if rc, err := connectErr(ts.dsn("bob", "pw9")); err != nil {
				t.Fatal(err)
			} else {
				rc.Close(ctx)
			}
			if _, err := c.Exec(ctx, "DROP ROLE bob, carol"); err != nil {
				t.Fatal(err)
			}
			_, err = connectErr(ts.dsn("bob", "pw9"))
			wantPgError(t, err, "28P01", "")
			_, err = c.Exec(ctx, "DROP ROLE bob")
			wantPgError(t, err, "42704", `role "bob" does not exist`)

			roles, err := ts.eng.Roles()
			if err != nil {
				t.Fatal(err)
			}
			if len(roles) != 1 || roles[0].Name != "dave" || roles[0].CanLogin || !strings.HasPrefix(roles[0].Verifier, "SCRAM-SHA-256$4096:") {
				t.Fatalf("roles = %+v", roles)
			}
		})
	}
}

// remoteListener makes every connection look as if it came from a
// non-loopback address.
type remoteListener struct{ net.Listener }

func (l remoteListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return remoteConn{c}, nil
}

type remoteConn struct{ net.Conn }

func (remoteConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.ParseIP("203.0.113.7"), Port: 40000}
}

func TestTrustRefusedForRemoteClients(t *testing.T) {
	for _, allow := range []bool{false, true} {
		eng, err := instance.Open(instance.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ts := serveOn(t, eng, remoteListener{ln}, Config{Auth: AuthConfig{AllowTrustRemote: allow}})
		c, err := connectErr(ts.dsn("eve", ""))
		if allow {
			if err != nil {
				t.Fatal(err)
			}
			c.Close(context.Background())
			continue
		}
		wantPgError(t, err, "28000", `trust authentication is refused for remote connection from 203.0.113.7:40000 (user "eve")`)
		if ts.srv.Stats().Rejected != 1 {
			t.Errorf("stats = %+v, want one rejected", ts.srv.Stats())
		}
	}
}

// selfSignedTLS returns a server TLS config with a fresh self-signed
// certificate for 127.0.0.1.
func selfSignedTLS(t *testing.T) *tls.Config {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "rockstream test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

func TestTLS(t *testing.T) {
	ts := startServer(t, Config{TLS: selfSignedTLS(t), Auth: AuthConfig{Method: AuthSCRAM, Users: map[string]string{"alice": "pw"}}})
	dsn := strings.Replace(ts.dsn("alice", "pw"), "sslmode=disable", "sslmode=require", 1)
	c, err := connectErr(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, ok := c.PgConn().Conn().(*tls.Conn); !ok {
		t.Fatalf("connection is %T, want TLS", c.PgConn().Conn())
	}
	var n int
	if err := c.QueryRow(context.Background(), "SELECT 40 + $1::int", 2).Scan(&n); err != nil || n != 42 {
		t.Fatalf("got %d, %v", n, err)
	}
	// A statement long enough for the server to read the client meanwhile
	// (watch.go), with the rest of a batch behind it: interrupting the
	// read leaves the TLS connection intact and the messages in order.
	batch := &pgx.Batch{}
	batch.Queue("SELECT count(*) FROM generate_series(1, 1000) a, generate_series(1, 300) b")
	batch.Queue("SELECT 40 + $1::int", 2)
	br := c.SendBatch(context.Background(), batch)
	var pairs int64
	if err := br.QueryRow().Scan(&pairs); err != nil || pairs != 300000 {
		t.Fatalf("got %d, %v", pairs, err)
	}
	if err := br.QueryRow().Scan(&n); err != nil || n != 42 {
		t.Fatalf("got %d, %v", n, err)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(context.Background(), "SELECT 41 + $1::int", 1).Scan(&n); err != nil || n != 42 {
		t.Fatalf("got %d, %v", n, err)
	}

	// Without TLS configured the server answers 'N': sslmode=require
	// fails, prefer falls back to plain text.
	plain := startServer(t, Config{})
	if _, err := connectErr(strings.Replace(plain.dsn("x", ""), "sslmode=disable", "sslmode=require", 1)); err == nil {
		t.Fatal("sslmode=require succeeded without TLS")
	}
	c2, err := connectErr(strings.Replace(plain.dsn("x", ""), "sslmode=disable", "sslmode=prefer", 1))
	if err != nil {
		t.Fatal(err)
	}
	c2.Close(context.Background())

	// A GSSENCRequest is refused with 'N' and the startup continues.
	r := dialRawNoStartup(t, plain.addr)
	r.send(&pgproto3.GSSEncRequest{})
	b := make([]byte, 1)
	if _, err := r.nc.Read(b); err != nil || b[0] != 'N' {
		t.Fatalf("GSSENCRequest answered %q, %v", b, err)
	}
}
