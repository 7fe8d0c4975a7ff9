package main

import (
	"bytes"
	"embed"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/spf13/cobra"
)

// inittemplates holds the files `rockstream init` generates, as
// text/template sources named after the file they produce plus ".tmpl".
//
//go:embed inittemplates/*.tmpl
var inittemplates embed.FS

// projectTemplates lists each template and the files it generates, in the
// order they are written.
var projectTemplates = map[string][]string{
	"local":        {"README.md", "run.sh", "schema.sql", "verify.sh", "cleanup.sh"},
	"kafka":        {"README.md", "run.sh", "schema.sql", "verify.sh", "cleanup.sh"},
	"postgres-cdc": {"README.md", "run.sh", "schema.sql", "upstream.sql", "verify.sh", "cleanup.sh"},
}

// projectParams are the values the templates are rendered with.
type projectParams struct {
	Name, Template   string
	PGAddr, HTTPAddr string
	PGHost, PGPort   string
	KafkaBrokers     string
	Topic            string
	PGConnection     string
}

func newInitCommand() *cobra.Command {
	p := projectParams{}
	var force bool
	cmd := &cobra.Command{
		Use:   "init DIR [--template local|kafka|postgres-cdc] [flags]",
		Short: "Generate a runnable RockStream project in DIR",
		Long: `Init writes a small project into DIR: README.md, run.sh (starts
"rockstream start --storage ./data" on --pg-addr and --http-addr), schema.sql
(tables, materialized views and connectors), verify.sh (applies schema.sql
with psql and checks a view's contents, exiting 1 on a mismatch) and
cleanup.sh (stops the server and removes ./data). Every script runs under
"set -euo pipefail".

Templates:
  local          orders and sales per store, with sample INSERTs
  kafka          a table fed by a Kafka source (--kafka-brokers, --topic),
                 a view over it and a Kafka sink of the view
  postgres-cdc   tables replicated from an upstream PostgreSQL
                 (--pg-connection) by CREATE SOURCE ... FROM POSTGRES, a view
                 over them, and upstream.sql to run upstream first;
                 cleanup.sh drops the source first, leaving no
                 replication slot or publication upstream

DIR is created if missing; init refuses a DIR that is not empty unless
--force is given, in which case the generated files are overwritten and
others are left alone.`,
		Example: `  rockstream init shop
  ./shop/run.sh &
  ./shop/verify.sh && ./shop/cleanup.sh
  rockstream init feed --template kafka --kafka-brokers localhost:9092 --topic orders
  rockstream init mirror --template postgres-cdc \
      --pg-connection 'postgres://cdc@db.internal:5432/shop'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, ok := projectTemplates[p.Template]
			if !ok {
				return usageError{fmt.Errorf("unknown template %q: want local, kafka or postgres-cdc", p.Template)}
			}
			host, port, err := net.SplitHostPort(p.PGAddr)
			if err != nil {
				return usageError{fmt.Errorf("--pg-addr %q: %v", p.PGAddr, err)}
			}
			p.PGHost, p.PGPort = host, port
			if p.PGHost == "" || p.PGHost == "0.0.0.0" || p.PGHost == "::" {
				p.PGHost = "127.0.0.1"
			}
			dir := args[0]
			p.Name = filepath.Base(filepath.Clean(dir))
			rendered, err := renderProject(p, files)
			if err != nil {
				return err
			}
			if err := prepareProjectDir(dir, force); err != nil {
				return err
			}
			for _, name := range files {
				mode := os.FileMode(0o644)
				if strings.HasSuffix(name, ".sh") {
					mode = 0o755
				}
				path := filepath.Join(dir, name)
				if err := os.WriteFile(path, rendered[name], mode); err != nil {
					return err
				}
				if err := os.Chmod(path, mode); err != nil {
					return err
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created %s project in %s: %s\n", p.Template, dir, strings.Join(files, ", "))
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&p.Template, "template", "local", "project `TEMPLATE`: local, kafka or postgres-cdc")
	fs.BoolVar(&force, "force", false, "write into DIR even when it is not empty")
	fs.StringVar(&p.PGAddr, "pg-addr", defaultPGAddr, "address run.sh serves PostgreSQL clients on (`host:port`)")
	fs.StringVar(&p.HTTPAddr, "http-addr", defaultHTTPAddr, "address run.sh serves health checks and metrics on (`host:port`)")
	fs.StringVar(&p.KafkaBrokers, "kafka-brokers", "localhost:9092", "kafka template: the `BROKERS` (comma-separated host:port)")
	fs.StringVar(&p.Topic, "topic", "orders", "kafka template: the `TOPIC` orders are read from")
	fs.StringVar(&p.PGConnection, "pg-connection", "postgres://postgres@localhost:5432/postgres",
		"postgres-cdc template: connection string of the upstream `DATABASE`")
	return cmd
}

// renderProject renders files of the template p.Template with p.
func renderProject(p projectParams, files []string) (map[string][]byte, error) {
	funcs := template.FuncMap{"sqlString": sqlString, "shellString": shellString}
	out := map[string][]byte{}
	for _, name := range files {
		src, err := inittemplates.ReadFile("inittemplates/" + name + ".tmpl")
		if err != nil {
			return nil, err
		}
		t, err := template.New(name).Funcs(funcs).Option("missingkey=error").Parse(string(src))
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, p); err != nil {
			return nil, err
		}
		text := strings.TrimLeft(b.String(), "\n")
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		out[name] = []byte(text)
	}
	return out, nil
}

// prepareProjectDir creates dir, or checks that it is empty unless force.
func prepareProjectDir(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return usageError{err}
	case len(entries) > 0 && !force:
		return usageError{fmt.Errorf("%s is not empty; use --force to write into it anyway", dir)}
	}
	return nil
}

// sqlString quotes s as a SQL string literal.
func sqlString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// shellString quotes s as a single shell word.
func shellString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
