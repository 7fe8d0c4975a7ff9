package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/rockstream/rockstream/internal/types"
)

// TestScripts runs the scripts in testdata/: each `exec` runs its
// statements in one session and prints every result and notice;
// `message` runs its input as one Query message (implicit.go), printing
// each result up to the first error and then the session's transaction status; `verify` checks that
// every materialized view equals its recomputation; `state-keys VIEW`
// counts the keys of a view's operator state (state_test.go); COPY,
// SUBSCRIBE and their streams have the commands of stream_test.go.
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		eng := OpenMemory()
		sessions := map[string]*Session{}
		defer func() {
			for _, s := range sessions {
				s.Close()
			}
			if err := eng.Close(); err != nil {
				t.Error(err)
			}
		}()
		st := streams{}
		session := func(d *datadriven.TestData) *Session {
			name := "default"
			if d.HasArg("session") {
				d.ScanArgs(t, "session", &name)
			}
			s := sessions[name]
			if s == nil {
				s = eng.NewSession()
				sessions[name] = s
			}
			return s
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "exec":
				return execScript(t, session(d), d.Input)
			case "message":
				return execMessage(session(d), d.Input)
			case "copy-from":
				return scriptCopyFrom(t, session(d), d)
			case "copy-to":
				return scriptCopyTo(t, session(d), d)
			case "stream":
				return scriptStream(t, session(d), st, d)
			case "next":
				return scriptNext(t, st, d)
			case "close":
				return scriptClose(t, st, d)
			case "verify":
				if err := eng.VerifyViews(); err != nil {
					return "error: " + err.Error() + "\n"
				}
				return "ok\n"
			case "epoch":
				return fmt.Sprintf("%d\n", eng.Epoch())
			case "state-keys":
				return stateKeys(t, eng, d)
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

func execScript(t *testing.T, s *Session, script string) string {
	var b strings.Builder
	s.OnNotice(func(n Notice) {
		fmt.Fprintf(&b, "%s (%s): %s\n", strings.ToLower(n.Severity), n.SQLState, n.Message)
	})
	defer s.OnNotice(nil)
	for _, stmt := range splitStatements(t, script) {
		res, err := s.Exec(context.Background(), stmt, nil)
		if err != nil {
			b.WriteString(errorText(err))
			continue
		}
		writeResultIn(&b, res, s.Zone())
	}
	return b.String()
}

// execMessage runs message as the gateway runs a Query message.
func execMessage(s *Session, message string) string {
	var b strings.Builder
	ctx := context.Background()
	stmts, bad := ParseMessage(message)
	if bad != nil {
		stmts = []*Statement{bad}
	}
	s.BeginMessage(len(stmts) > 1)
	for _, st := range stmts {
		res, err := s.ExecStatement(ctx, st, nil)
		if err != nil {
			b.WriteString(errorText(err))
			break
		}
		writeResultIn(&b, res, s.Zone())
	}
	if err := s.EndMessage(ctx); err != nil {
		b.WriteString("at the end of the message: " + errorText(err))
	}
	fmt.Fprintf(&b, "status %c\n", s.TxnStatus())
	return b.String()
}

// writeResult prints a statement's result: its columns and rows, if it
// has any, and its tag.
func writeResult(b *strings.Builder, res *Result) { writeResultIn(b, res, types.UTCZone) }

// writeResultIn is writeResult with timestamptz values shown in zone z,
// as the session's client sees them.
func writeResultIn(b *strings.Builder, res *Result, z types.Zone) {
	if res.Columns != nil {
		var names []string
		for _, c := range res.Columns {
			names = append(names, c.Name+":"+c.Type.String())
		}
		b.WriteString(strings.Join(names, " | ") + "\n")
		for _, row := range res.Rows {
			var vals []string
			for i, v := range row {
				if v.IsNull() {
					vals = append(vals, "NULL")
				} else {
					vals = append(vals, types.FormatZone(v, res.Columns[i].Type, z))
				}
			}
			b.WriteString(strings.Join(vals, " | ") + "\n")
		}
	}
	b.WriteString(res.Tag + "\n")
}

// splitStatements splits on semicolons at line ends, which is all the
// scripts here need.
func splitStatements(t *testing.T, script string) []string {
	var out []string
	for _, part := range strings.Split(script, ";\n") {
		part = strings.TrimSuffix(strings.TrimSpace(part), ";")
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}
