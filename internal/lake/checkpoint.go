package lake

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/rockstream/rockstream/internal/storage"
)

// CheckpointResult is what an online checkpoint uploaded (and, with a
// keep count, what it pruned), the answer of POST /admin/checkpoint in
// the same shape as rockstream start's.
type CheckpointResult struct {
	Manifest *storage.Manifest    `json:"manifest"`
	Pruned   *storage.PruneResult `json:"pruned,omitempty"`
}

// Checkpoint uploads a checkpoint of the running lake to url
// (storage.CreateCheckpoint) while it keeps serving. A commit is one
// atomic write of the store, so the copy holds exactly the commits up to
// some revision and none after it; that revision is the manifest's
// Epoch (the lake's epoch key, docs/format/lake.md). keep > 0 keeps only
// that many newest checkpoints at url.
func (s *Server) Checkpoint(ctx context.Context, url string, keep int) (*CheckpointResult, error) {
	if keep < 0 {
		return nil, errorf("22023", "keep must be at least 1, not %d", keep)
	}
	m, err := storage.CreateCheckpoint(ctx, s.store.db, url, map[string]string{"taken": "online"}, nil)
	if err != nil {
		return nil, err
	}
	res := &CheckpointResult{Manifest: m}
	if keep > 0 {
		if res.Pruned, err = storage.PruneCheckpoints(ctx, url, keep); err != nil {
			return res, err
		}
	}
	return res, nil
}

// checkpointRequest is the body of POST /admin/checkpoint.
type checkpointRequest struct {
	To   string `json:"to"`
	Keep int    `json:"keep,omitempty"`
}

// serveCheckpoint answers POST /admin/checkpoint (JSON {"to": URL,
// "keep": n}) once the checkpoint is complete; a refusal is JSON
// {"error", "sqlstate"}. A JSON body cannot be sent across sites without
// the browser asking first, so a page cannot trigger it.
func (s *Server) serveCheckpoint(w http.ResponseWriter, r *http.Request) {
	var req checkpointRequest
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeJSON(w, http.StatusBadRequest, actionError{"send the request as Content-Type: application/json", "22023"})
		return
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, actionError{"the request body is not valid: " + err.Error(), "22023"})
		return
	}
	if strings.TrimSpace(req.To) == "" {
		writeJSON(w, http.StatusBadRequest, actionError{`the request names no location: send {"to": "file:///path"}`, "22023"})
		return
	}
	res, err := s.Checkpoint(r.Context(), req.To, req.Keep)
	if err != nil {
		s.log.Warn("lake: checkpoint failed", "to", req.To, "err", err)
		code, state := http.StatusInternalServerError, "58030"
		var se *sqlError
		if errors.As(err, &se) {
			code, state = http.StatusBadRequest, se.code
		}
		writeJSON(w, code, actionError{err.Error(), state})
		return
	}
	s.log.Info("lake: checkpoint", "to", req.To, "id", res.Manifest.ID, "revision", res.Manifest.Epoch)
	writeJSON(w, http.StatusOK, res)
}

// actionError is the body of a refused action.
type actionError struct {
	Error    string `json:"error"`
	SQLState string `json:"sqlstate"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, "encoding the answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}
