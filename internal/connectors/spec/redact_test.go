package spec

import (
	"strings"
	"testing"
)

func TestRedactValue(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://cdc:hunter2@db:5432/shop":                    "postgres://cdc:********@db:5432/shop",
		"postgresql://cdc:p%40ss@db/shop?sslmode=require":        "postgresql://cdc:********@db/shop?sslmode=require",
		"postgres://cdc@db/shop?password=hunter2&sslmode=verify": "postgres://cdc@db/shop?password=********&sslmode=verify",
		"host=db user=cdc password=hunter2 dbname=shop":          "host=db user=cdc password=******** dbname=shop",
		"host=db password = 'two words' sslpassword='k\\'ey'":    "host=db password = '********' sslpassword='********'",
		"host=db user=cdc":          "host=db user=cdc",
		"kafka-1:9092,kafka-2:9092": "kafka-1:9092,kafka-2:9092",
		"id":                        "id",
		"x -----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY----- y": "x ******** y",
		"-----BEGIN PRIVATE KEY-----\nMIIE":                                      "********",
	} {
		if got := RedactValue(in); got != want {
			t.Errorf("RedactValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactSQL(t *testing.T) {
	for in, want := range map[string]string{
		"CREATE SOURCE s FROM POSTGRES (connection = 'postgres://u:pw1@h/db', password = 'it''s') FOR TABLES (t)": "CREATE SOURCE s FROM POSTGRES (connection = 'postgres://u:********@h/db', password = '********') FOR TABLES (t)",
		"CREATE ROLE bob LOGIN PASSWORD 'b0b'":                               "CREATE ROLE bob LOGIN PASSWORD '********'",
		"ALTER SINK k SET (sasl_password = 'x')":                             "ALTER SINK k SET (sasl_password = '********')",
		"CREATE SOURCE s FROM POSTGRES (connection = 'host=h password=pw2')": "CREATE SOURCE s FROM POSTGRES (connection = 'host=h password=********')",
		"SELECT 1":                  "SELECT 1",
		"SELECT 'password' AS word": "SELECT 'password' AS word",
	} {
		if got := RedactSQL(in); got != want {
			t.Errorf("RedactSQL(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestRedactedOptions(t *testing.T) {
	s := &Spec{Name: "s", Connector: "unregistered", Options: []Option{
		{Key: "connection", Value: "postgres://cdc:hunter2@db/shop"},
		{Key: "tls_private_key", Value: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"},
		{Key: "api_token", Value: "t0ken"},
		{Key: "topic", Value: "orders"},
	}}
	got := s.Redacted()
	for _, secret := range []string{"hunter2", "AAAA", "t0ken"} {
		if strings.Contains(got, secret) {
			t.Errorf("Redacted() = %q shows %q", got, secret)
		}
	}
	if !strings.Contains(got, "topic = 'orders'") || !strings.Contains(got, "postgres://cdc:********@db/shop") {
		t.Errorf("Redacted() = %q", got)
	}
	msg := s.RedactText(`connecting to "postgres://cdc:hunter2@db/shop" failed: token t0ken, key ` + s.Options[1].Value)
	for _, secret := range []string{"hunter2", "AAAA", "t0ken"} {
		if strings.Contains(msg, secret) {
			t.Errorf("RedactText left %q in %q", secret, msg)
		}
	}
}
