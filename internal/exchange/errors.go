package exchange

import (
	"fmt"

	"github.com/rockstream/rockstream/internal/errs"
)

// The errors of the exchange. Exchange, Any and Max wrap one of them with
// what happened (fmt's %w), so errors.Is tells the cases apart and
// errs.SQLState reads their SQLSTATE.
var (
	// ErrAssignmentMoved: this mesh's assignment is no longer current — a
	// peer refused its frames as older than its own revision, a peer sent
	// frames of a newer revision, or Fence raised the revision past a
	// pending exchange. The caller takes up the new assignment.
	ErrAssignmentMoved = errs.New(errs.SerializationFailure, "exchange: the assignment moved")
	// ErrPeerLost: a peer could not be reached, or its stream ended before
	// it sent its part of an exchange.
	ErrPeerLost = errs.New(errs.IOError, "exchange: a peer was lost")
	// ErrMalformed: a frame or its Arrow bytes could not be decoded.
	ErrMalformed = errs.New(errs.ProtocolViolation, "exchange: malformed frame")
	// ErrPeerAborted: a peer failed its part of the step or left the
	// mesh, and said so (Mesh.Abort, Mesh.Close), before it sent a part
	// the call waits for. The error wraps the peer's own error first, so
	// errs.SQLState reads the peer's SQLSTATE.
	ErrPeerAborted = errs.New(errs.IOError, "exchange: a peer aborted the step")
	// ErrClosed: the mesh was closed.
	ErrClosed = errs.New(errs.AdminShutdown, "exchange: the mesh is closed")
)

// malformed returns an ErrMalformed error saying what is wrong.
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}
