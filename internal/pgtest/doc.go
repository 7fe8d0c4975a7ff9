// Package pgtest starts a throwaway PostgreSQL server for tests.
//
// One server runs per test binary. The first test that asks for it
// (DSN, NewDatabase) creates a cluster in a temporary directory with
// initdb (--locale=C.UTF-8 -E UTF8 --auth=trust), starts it on a free
// loopback port with fsync off and wal_level=logical, and every later test
// in the binary shares it. Tests isolate themselves by creating their own
// database (NewDatabase). Server.Restart stops and starts the shared
// server on the same port and data, for tests of clients that must survive
// an upstream restart.
//
// The server binaries come from the directory named by ROCKSTREAM_PG_BIN,
// else /usr/lib/postgresql/15/bin (the reference version), else the
// newest other version installed under /usr/lib/postgresql. When the process runs as root, the
// server runs as the postgres user through runuser, since PostgreSQL
// refuses to run as root.
//
// Absence is a skip, not a failure, unless ROCKSTREAM_REQUIRE_PG=1 is set
// (CI sets it): then a test that needs PostgreSQL fails when the binaries
// are missing. A server that is installed but fails to start is always a
// failure.
//
// Lifetime: a package that uses pgtest calls Main from its TestMain, which
// stops the server (fast shutdown) and removes its directory after the
// tests. The server is also tied to the test process with a parent-death
// signal, so a test binary that dies (a timeout panic, a kill) does not
// leave a server behind.
package pgtest
