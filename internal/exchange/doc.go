// Package exchange moves Z-set batches between the processes of a cluster:
// gRPC streams of frames whose payload is Arrow IPC record batches with a
// weight column (DESIGN.md §9). The frame and the Arrow schema mapping are
// specified in docs/format/exchange.md.
//
// # Arrow mapping
//
// EncodeBatch writes a batch as an Arrow IPC stream, one column per SQL
// column and a non-NULL int64 weight last; NULLs are Arrow nulls.
// DecodeBatch returns exactly the entries written, in order: every value
// is identical to the one encoded, as zset.EncodeRow tells values apart
// (numeric scale, NaN and infinities; float -0 and NaN payloads;
// an interval's months, days and microseconds; time zones of timetz;
// array shapes; text and bytea bytes as they are). The column layout is
// inferred from the batch's values, so no schema needs to be agreed on
// beforehand: a column whose values are all of one kind with an exact
// Arrow type uses it (booleans, integers, floats, text, bytea, date,
// timestamp, timestamptz, time); other kinds (numeric, interval, timetz,
// jsonb, arrays, the OID types) and columns mixing kinds carry each
// value's zset row encoding in a binary cell; an all-NULL column is
// Arrow's null type. Each field's metadata names the kind, so a decoder
// checks what it reads. Decoding never panics: malformed input gives an
// ErrMalformed error (SQLSTATE 08P01).
//
// # Frames and streams
//
// A frame is a 48-byte header — format version, kind (batch, any, max, abort),
// last-chunk flag, sender, assignment revision, key (epoch, scope, node,
// iteration), sequence number within its message, payload length, and a
// CRC-32C of header and payload — then the payload. A message (what one
// sender sends for one key) is one or more frames; a batch's IPC stream is
// cut into chunks of at most Options.ChunkBytes, below the gRPC message
// limit. Each mesh opens one stream to each peer and sends its messages
// on it in call order.
//
// # Meshes
//
// A Node is a process's gRPC server and its client connections; it serves
// one Assignment at a time as a Mesh (Node.Join). Mesh.Exchange is an
// all-to-all for one key: out[p] goes to peer p, the own part stays
// local, and the call returns what every peer sent this member. Any and
// Max are the agreements a parallel operator needs; internal/diff steps a
// circuit over a mesh (diff.Peers), naming its exchanges as
// docs/format/exchange.md says. Invariants:
//
//   - Every member makes the same calls with the same keys in the same
//     order, one call at a time. A message is for exactly one call: two
//     calls with the same key and kind in one mesh are a caller's error.
//   - Bounded memory: the bytes of messages for keys no call has asked for
//     yet (a fast peer running ahead) are bounded by Options.BufferBytes.
//     Past it the receiver stops reading that sender's stream, and gRPC's
//     flow control holds the sender back; one frame is always admitted,
//     so a stream never waits for a buffer that cannot fill. Nothing is
//     sent per row, and no queue grows without bound.
//   - Fencing: every frame carries its mesh's revision. A node refuses
//     frames older than the newest revision it joined (the sender's call
//     fails with ErrAssignmentMoved). A frame newer than the node's
//     revision fails the node's current mesh with ErrAssignmentMoved and
//     waits, held back, until the node joins that revision.
//   - No hang past the deadline: a call returns when every part is in, or
//     when the mesh fails — a peer unreachable or refusing, a peer's stream
//     ending before its part arrived (ErrPeerLost), Close (ErrClosed) —
//     or when its context ends (ErrPeerLost naming the peers it still
//     waits for). A call whose context has ended already sends nothing. A call that fails fails the mesh: every later call
//     returns the same error, and the caller closes it.
//   - A member that fails its part of a step (Abort) or leaves its mesh
//     (Close) says so: its peers' calls that wait for a part it has not
//     sent fail with ErrPeerAborted, wrapping its error's code and
//     message, even when it had opened no stream to them; the parts it
//     sent before still count. Close half-closes each stream and gives
//     the peer a moment to take what was sent before cancelling it, so
//     that a peer sees the stream end after the frames sent on it, never
//     in their place.
//   - A node keeps serving whatever one stream sends: a malformed frame
//     ends that stream with codes.InvalidArgument and fails the messages
//     it was part of, nothing more.
//
// The transport has no authentication or TLS yet: peers are trusted to
// be the members of the assignment they name.
package exchange
