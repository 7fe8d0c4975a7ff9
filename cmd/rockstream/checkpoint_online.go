package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/internal/admin"
	"github.com/rockstream/rockstream/internal/runtime"
)

// serverURL checks a --server URL (http:// or https://, host and port) and
// returns it with path joined.
func serverURL(raw, path string) (string, error) {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--server %q is not an HTTP address such as http://127.0.0.1:6876", raw)
	}
	return strings.TrimRight(u.String(), "/") + path, nil
}

// postAction sends an operator action to a running server and decodes
// its answer into out; a refusal is an error carrying the server's
// message and SQLSTATE.
func postAction(cmd *cobra.Command, server, path string, req, out any) error {
	target, err := serverURL(server, path)
	if err != nil {
		return usageError{err}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	hreq, err := http.NewRequestWithContext(cmd.Context(), http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return fmt.Errorf("cannot reach the server at %s: %w", server, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("reading the answer of %s: %w", target, err)
	}
	if resp.StatusCode != http.StatusOK {
		if err := refusal(raw); err != nil {
			return err
		}
		return fmt.Errorf("the server answered %s: %s", resp.Status, strings.TrimSpace(string(raw)))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("the answer of %s does not decode: %w", target, err)
	}
	return nil
}

// checkpointServer asks a running server for an online checkpoint.
func checkpointServer(cmd *cobra.Command, server, to string, keep int) error {
	var res runtime.CheckpointResult
	if err := postAction(cmd, server, "/admin/checkpoint", admin.CheckpointRequest{To: to, Keep: keep}, &res); err != nil {
		return err
	}
	if res.Manifest == nil {
		return fmt.Errorf("the server's answer names no checkpoint")
	}
	printCheckpoint(cmd, &res, to)
	return nil
}
