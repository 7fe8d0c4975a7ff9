package gateway

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/scram"
)

// Passwords that SASLprep changes, leaves alone, or refuses to prepare.
var scramPasswords = []string{"pencil", "p\u00e4ssw\u00f6rd", "\u2168-nine", "soft\u00ADhyphen", "no\u00A0break", "bell\u0007", "\u0627\u0031"}

// TestSCRAMVerifiersMatchPostgres has PostgreSQL store each password as a
// SCRAM verifier and checks that RockStream accepts the password against
// it: both prepare passwords (SASLprep) and derive keys alike.
func TestSCRAMVerifiersMatchPostgres(t *testing.T) {
	pgtest.Require(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.NewDatabase(t, "gwscram"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET password_encryption = 'scram-sha-256'"); err != nil {
		t.Fatal(err)
	}
	for i, pw := range scramPasswords {
		role := fmt.Sprintf("gw_scram_%d_%d", os.Getpid(), i)
		if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s'", role, pw)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP ROLE IF EXISTS "+role) })
		var stored string
		if err := conn.QueryRow(ctx, "SELECT rolpassword FROM pg_authid WHERE rolname = $1", role).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		v, err := scram.ParseVerifier(stored)
		if err != nil {
			t.Fatalf("PostgreSQL's verifier %q: %v", stored, err)
		}
		if !v.CheckPassword(pw) {
			t.Errorf("password %q does not match PostgreSQL's verifier", pw)
		}
	}
}

// TestPsqlSCRAM logs in with psql (libpq's SCRAM and SASLprep) to roles
// created in RockStream.
func TestPsqlSCRAM(t *testing.T) {
	if _, err := os.Stat(psqlPath); err != nil {
		t.Skip("psql is not installed")
	}
	ts := startServer(t, Config{Auth: AuthConfig{Method: AuthSCRAM, Users: map[string]string{"admin": "admin pw"}}})
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, ts.dsn("admin", "admin%20pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for i, pw := range scramPasswords {
		role := fmt.Sprintf("r%d", i)
		if _, err := admin.Exec(ctx, fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s'", role, pw)); err != nil {
			t.Fatal(err)
		}
		for _, try := range []struct {
			pw string
			ok bool
		}{{pw, true}, {pw + "x", false}} {
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			cmd := exec.CommandContext(cctx, psqlPath, "-h", "127.0.0.1", "-p", ts.port(), "-U", role, "-d", "rockstream", "-X", "-q", "--csv", "-c", "SELECT 42 AS answer")
			cmd.Env = append(os.Environ(), "PGPASSWORD="+try.pw, "PGSSLMODE=disable")
			out, err := cmd.CombinedOutput()
			cancel()
			switch {
			case try.ok && (err != nil || string(out) != "answer\n42\n"):
				t.Errorf("password %q: %v\n%s", try.pw, err, out)
			case !try.ok && (err == nil || !strings.Contains(string(out), `password authentication failed for user "`+role+`"`)):
				t.Errorf("wrong password %q accepted or wrongly refused: %v\n%s", try.pw, err, out)
			}
		}
	}
}
