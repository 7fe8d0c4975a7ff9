package ext

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestParseScripts runs testdata/parse.txt: each `parse` prints what
// Parse recognizes in its input.
func TestParseScripts(t *testing.T) {
	datadriven.RunTest(t, "testdata/parse.txt", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "parse" {
			t.Fatalf("unknown command %q", d.Cmd)
		}
		return describe(Parse(d.Input)) + "\n"
	})
}

var kindNames = map[Kind]string{
	None: "none", ExplainIncremental: "explain-incremental", AsOfEpoch: "as-of-epoch",
	Subscribe: "subscribe", CopyTo: "copy-to", DeclareCursor: "declare-cursor", Fetch: "fetch",
	CreateConnector: "create-connector", AlterConnector: "alter-connector", DropConnector: "drop-connector",
	ShowConnectors: "show-connectors", Checkpoint: "checkpoint",
}

func describe(st Statement) string {
	parts := []string{kindNames[st.Kind]}
	if st.Err != nil {
		return fmt.Sprintf("%s error (%s): %v", parts[0], errs.SQLState(st.Err), st.Err)
	}
	if st.Name != "" {
		parts = append(parts, fmt.Sprintf("name=%q", st.Name))
	}
	if st.Query != "" {
		parts = append(parts, fmt.Sprintf("query=%q", st.Query))
	}
	if st.Kind == Subscribe {
		parts = append(parts, fmt.Sprintf("snapshot=%t progress=%t", st.Snapshot, st.Progress))
	}
	if st.HasEpoch || st.Kind == AsOfEpoch {
		parts = append(parts, fmt.Sprintf("epoch=%d", st.Epoch))
	}
	if st.Estimate {
		parts = append(parts, "estimate")
	}
	if st.Keep != 0 {
		parts = append(parts, fmt.Sprintf("keep=%d", st.Keep))
	}
	if st.Timeout != "" {
		parts = append(parts, fmt.Sprintf("timeout=%q", st.Timeout))
	}
	if c := st.Connector; c != nil {
		parts = append(parts, fmt.Sprintf("%+v", *c))
	}
	if st.Inner != nil {
		parts = append(parts, "inner=["+describe(*st.Inner)+"]")
	}
	return strings.Join(parts, " ")
}
