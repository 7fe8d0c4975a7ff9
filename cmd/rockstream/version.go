package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is the release version, set at build time with
//
//	go build -ldflags "-X main.version=v1.2.3" ./cmd/rockstream
//
// When it is empty the module version recorded in the binary is used, or
// "dev" for a build from a source tree.
var version string

// buildVersion describes the running binary.
type buildVersion struct {
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from, or "unknown".
	Commit string `json:"commit"`
	Go     string `json:"go"`
}

func currentVersion() buildVersion {
	v := buildVersion{Version: version, Commit: "unknown", Go: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if ok {
		if v.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				v.Commit = s.Value
			}
		}
	}
	if v.Version == "" {
		v.Version = "dev"
	}
	return v
}

func newVersionCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version [--json]",
		Short: "Print the version of this binary",
		Long: `Print the version of this binary, the source revision it was built from
and the Go release that built it.

With --json the same facts are printed as one JSON object with the keys
"version", "commit" and "go", for scripts and bug reports. The commit is
"unknown" when the binary was built without version control information.`,
		Example: `  rockstream version
  rockstream version --json | jq -r .version`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := currentVersion()
			if asJSON {
				b, err := json.Marshal(v)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
				return err
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "rockstream %s (commit %s, %s)\n", v.Version, v.Commit, v.Go)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the version as a JSON object")
	return cmd
}
