package runtime

import (
	"context"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestUnsupportedStatementNames checks that a statement RockStream does
// not run fails with 0A000 naming it as it is written, as PostgreSQL's
// command tags name it, never by the parser's node type.
func TestUnsupportedStatementNames(t *testing.T) {
	e := OpenMemory()
	defer e.Close()
	s := e.NewSession()
	defer s.Close()
	for q, want := range map[string]string{
		"ALTER TYPE e SET SCHEMA s":                                      "ALTER TYPE ... SET SCHEMA is not supported",
		"ALTER DOMAIN d SET SCHEMA s":                                    "ALTER DOMAIN ... SET SCHEMA is not supported",
		"ALTER FOREIGN TABLE t SET SCHEMA s":                             "ALTER FOREIGN TABLE ... SET SCHEMA is not supported",
		"CREATE UNIQUE INDEX i ON t (a) WHERE a > 1":                     "partial indexes (CREATE INDEX ... WHERE) are not supported",
		"COMMENT ON FUNCTION f() IS 'x'":                                 "COMMENT ON FUNCTION is not supported",
		"CREATE DOMAIN d AS int":                                         "CREATE DOMAIN is not supported",
		"GRANT EXECUTE ON FUNCTION f() TO x":                             "GRANT and REVOKE on function are not supported",
		"CREATE FUNCTION f() RETURNS int AS 'select 1' LANGUAGE plpgsql": "LANGUAGE plpgsql is not supported: only LANGUAGE SQL functions whose body is one expression, which are inlined",
		"CREATE TRIGGER tr AFTER INSERT ON t EXECUTE FUNCTION f()":       "CREATE TRIGGER is not supported",
		"CREATE SEQUENCE q":                                              "CREATE SEQUENCE is not supported",
		"CREATE TYPE e AS ENUM ('a')":                                    "CREATE TYPE is not supported",
		"CREATE AGGREGATE a (int) (sfunc = f, stype = int)":              "CREATE AGGREGATE is not supported",
		"VACUUM":                      "VACUUM is not supported",
		"ANALYZE t":                   "ANALYZE is not supported",
		"REFRESH MATERIALIZED VIEW v": "REFRESH MATERIALIZED VIEW is not supported",
		"LISTEN x":                    "LISTEN is not supported",
		"COPY (INSERT INTO t VALUES (1)) TO STDOUT": "COPY (INSERT) TO is not supported; COPY takes a SELECT",
		"CREATE DATABASE d":                         "CREATE DATABASE is not supported",
	} {
		_, err := s.Exec(context.Background(), q, nil)
		if errs.SQLState(err) != "0A000" || err.Error() != want {
			t.Errorf("%s: got %v (%s), want 0A000 %s", q, err, errs.SQLState(err), want)
		}
	}
}
