package gateway

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// jsonbWireScenario moves jsonb values through COPY (text, csv and binary,
// out and back in) and through the extended protocol, where pgx asks for
// jsonb's binary format (a version byte and the text) for results and
// sends it for parameters.
func jsonbWireScenario(t *testing.T, conn *pgx.Conn) []string {
	ctx := context.Background()
	pc := conn.PgConn()
	var log []string
	exec := func(q string) {
		tag, err := pc.Exec(ctx, q).ReadAll()
		if err != nil {
			log = append(log, q+" => "+errCode(err))
			return
		}
		log = append(log, fmt.Sprintf("%s => %s", q, tag[len(tag)-1].CommandTag))
	}
	copyIn := func(q string, data []byte) {
		tag, err := pc.CopyFrom(ctx, bytes.NewReader(data), q)
		log = append(log, fmt.Sprintf("%s <= %q => %s %s", q, data, tag, errCode(err)))
	}
	copyOut := func(q string) []byte {
		var buf bytes.Buffer
		tag, err := pc.CopyTo(ctx, &buf, q)
		log = append(log, fmt.Sprintf("%s => %q %s %s", q, buf.String(), tag, errCode(err)))
		return buf.Bytes()
	}
	exec("CREATE TABLE j (id int PRIMARY KEY, data jsonb)")
	copyIn("COPY j FROM STDIN", []byte("1\t{\"b\": 1, \"a\": [1.50, \"x\\\\ty\", null]}\n2\t\\N\n3\t\"s\"\n"))
	copyIn("COPY j FROM STDIN (FORMAT csv)", []byte("4,\"{\"\"k\"\": true}\"\n5,[]\n"))
	copyIn("COPY j FROM STDIN", []byte("6\t{bad\n"))
	text := copyOut("COPY (SELECT * FROM j ORDER BY id) TO STDOUT")
	copyOut("COPY (SELECT * FROM j ORDER BY id) TO STDOUT (FORMAT csv)")
	bin := copyOut("COPY (SELECT id + 10, data FROM j ORDER BY id) TO STDOUT (FORMAT binary)")
	copyIn("COPY j FROM STDIN (FORMAT binary)", bin)
	exec("CREATE TABLE j2 (id int, data jsonb)")
	copyIn("COPY j2 FROM STDIN", text)
	copyOut("COPY (SELECT * FROM j2 ORDER BY id) TO STDOUT")
	var id int
	if err := conn.QueryRow(ctx, "INSERT INTO j VALUES ($1, $2) RETURNING id", 30, `{"p": [1, {"q": null}]}`).Scan(&id); err != nil {
		log = append(log, "insert with parameters => "+errCode(err))
	}
	rows, err := conn.Query(ctx, "SELECT id, data, data -> 'a', data ->> 'b' FROM j WHERE id > $1 ORDER BY id", 0)
	if err != nil {
		return append(log, "query => "+errCode(err))
	}
	for rows.Next() {
		var id int
		var data, a, b *string
		if err := rows.Scan(&id, &data, &a, &b); err != nil {
			log = append(log, "scan => "+err.Error())
			continue
		}
		log = append(log, fmt.Sprintf("row %d %s %s %s", id, strOrNull(data), strOrNull(a), strOrNull(b)))
	}
	if err := rows.Err(); err != nil {
		log = append(log, "rows => "+errCode(err))
	}
	return log
}

func strOrNull(s *string) string {
	if s == nil {
		return "NULL"
	}
	return strings.ReplaceAll(*s, "\n", `\n`)
}

func TestJSONBWireMatchesPostgres(t *testing.T) {
	pgtest.Require(t)
	ts := startServer(t, Config{})
	want := jsonbWireScenario(t, connectPgx(t, pgtest.NewDatabase(t, "gwjsonb"), pgx.QueryExecModeCacheStatement))
	got := jsonbWireScenario(t, connectPgx(t, ts.dsn("tester", ""), pgx.QueryExecModeCacheStatement))
	compareLogs(t, got, want)
}
