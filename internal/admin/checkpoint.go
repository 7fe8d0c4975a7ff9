package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// The operator actions: endpoints under /admin/ that change something,
// reached with POST and a JSON body. A browser cannot send such a request
// to another site without asking first (a JSON body is not a simple
// request), so a page the operator visits cannot trigger them.

// CheckpointRequest is the body of POST /admin/checkpoint.
type CheckpointRequest struct {
	// To is the checkpoint location, file:///path or s3://bucket/prefix.
	To string `json:"to"`
	// Keep, when positive, keeps only that many newest checkpoints at To.
	Keep int `json:"keep,omitempty"`
}

// ActionError is the body of a failed action, and of a failed request to
// the console's API (console.go).
type ActionError struct {
	Error    string `json:"error"`
	SQLState string `json:"sqlstate,omitempty"`
}

// maxActionBody bounds an action's request body.
const maxActionBody = 64 << 10

func (s *Server) routeActions(mux *http.ServeMux) {
	mux.HandleFunc("POST /admin/checkpoint", s.serveCheckpoint)
}

// serveCheckpoint takes an online checkpoint (runtime.Engine.Checkpoint)
// and answers with what it uploaded and deleted, once it is complete.
func (s *Server) serveCheckpoint(w http.ResponseWriter, r *http.Request) {
	var req CheckpointRequest
	if err := decodeAction(r, &req); err != nil {
		writeActionError(w, err)
		return
	}
	if strings.TrimSpace(req.To) == "" {
		writeActionError(w, errs.New(errs.InvalidParameterValue, `the request names no location: send {"to": "file:///path"}`))
		return
	}
	if req.Keep < 0 {
		writeActionError(w, errs.Newf(errs.InvalidParameterValue, "keep must be at least 1, not %d", req.Keep))
		return
	}
	eng := s.eng.Load()
	if eng == nil || !s.ready.Load() {
		writeActionError(w, errs.Newf(errs.PrerequisiteState, "the server is %s: try again once it is ready", s.status()))
		return
	}
	res, err := eng.Checkpoint(r.Context(), req.To, req.Keep, nil)
	eng.AuditCheckpoint("http "+r.RemoteAddr, req.To, res, err)
	if err != nil {
		writeActionError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, res)
}

// decodeAction reads a JSON request body into v.
func decodeAction(r *http.Request, v any) error {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return errs.New(errs.InvalidParameterValue, "send the request as Content-Type: application/json")
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxActionBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errs.Newf(errs.InvalidParameterValue, "the request body is not valid: %v", err)
	}
	return nil
}

// writeActionError answers with err's SQLSTATE and message: 400 for an
// invalid request, 503 when the server cannot act now, 500 otherwise.
func writeActionError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	state := errs.SQLState(err)
	switch {
	case strings.HasPrefix(state, "22"), strings.HasPrefix(state, "42"), state == "0A000":
		code = http.StatusBadRequest
	case state == "55000", strings.HasPrefix(state, "53"):
		code = http.StatusServiceUnavailable
	}
	var e *errs.Error
	msg := err.Error()
	if errors.As(err, &e) {
		msg = e.Message
	}
	WriteJSON(w, code, ActionError{Error: msg, SQLState: state})
}

// WriteJSON answers with v as indented JSON and HTTP status code.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, fmt.Sprintf("encoding the answer: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}
