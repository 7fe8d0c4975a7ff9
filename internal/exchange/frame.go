package exchange

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// FormatVersion is the version of the frame and of the Arrow schema
// mapping (docs/format/exchange.md).
const FormatVersion = 1

// kind says what a frame carries.
type kind uint8

const (
	kindBatch kind = 1 // a chunk of a batch's Arrow IPC stream
	kindAny   kind = 2 // a boolean (0 or 1, as an int64) for Any
	kindMax   kind = 3 // an int64 for Max
	kindAbort kind = 4 // the sender failed its step: its error (Abort)
)

func (k kind) String() string {
	switch k {
	case kindBatch:
		return "batch"
	case kindAny:
		return "any"
	case kindMax:
		return "max"
	case kindAbort:
		return "abort"
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// Key names one exchange: the epoch, and within it the circuit's scope,
// the node and the iteration of a recursive body (0 outside one). Every
// peer passes the same keys in the same order.
type Key struct {
	Epoch     uint64
	Scope     int32
	Node      int32
	Iteration int32
}

func (k Key) String() string {
	return fmt.Sprintf("epoch %d scope %d node %d iteration %d", k.Epoch, k.Scope, k.Node, k.Iteration)
}

// header is a frame's fixed part.
type header struct {
	kind     kind
	last     bool // the last chunk of its message
	sender   uint32
	revision uint64 // the assignment revision: the fencing token
	key      Key
	sequence uint32 // the chunk's number within its message, from 0
}

const (
	headerSize = 48
	flagLast   = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frameCRC is the checksum of a frame: of the header's first 44 bytes,
// then the payload.
func frameCRC(head, payload []byte) uint32 {
	return crc32.Update(crc32.Checksum(head, castagnoli), castagnoli, payload)
}

// appendFrame appends the frame of h and payload to dst.
func appendFrame(dst []byte, h header, payload []byte) []byte {
	start := len(dst)
	var flags byte
	if h.last {
		flags = flagLast
	}
	dst = append(dst, FormatVersion, byte(h.kind), flags, 0)
	dst = binary.LittleEndian.AppendUint32(dst, h.sender)
	dst = binary.LittleEndian.AppendUint64(dst, h.revision)
	dst = binary.LittleEndian.AppendUint64(dst, h.key.Epoch)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.key.Scope))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.key.Node))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.key.Iteration))
	dst = binary.LittleEndian.AppendUint32(dst, h.sequence)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	dst = binary.LittleEndian.AppendUint32(dst, frameCRC(dst[start:], payload))
	return append(dst, payload...)
}

// parseFrame checks a frame and returns its header and payload (a
// sub-slice of b).
func parseFrame(b []byte) (header, []byte, error) {
	var h header
	if len(b) < headerSize {
		return h, nil, malformed("a frame of %d bytes is shorter than its %d-byte header", len(b), headerSize)
	}
	if b[0] != FormatVersion {
		return h, nil, malformed("frame format version %d, expected %d", b[0], FormatVersion)
	}
	h.kind = kind(b[1])
	if h.kind < kindBatch || h.kind > kindAbort {
		return h, nil, malformed("unknown frame kind %d", b[1])
	}
	if b[2]&^flagLast != 0 || b[3] != 0 {
		return h, nil, malformed("unknown frame flags %#x %#x", b[2], b[3])
	}
	h.last = b[2]&flagLast != 0
	le := binary.LittleEndian
	h.sender = le.Uint32(b[4:])
	h.revision = le.Uint64(b[8:])
	h.key = Key{
		Epoch:     le.Uint64(b[16:]),
		Scope:     int32(le.Uint32(b[24:])),
		Node:      int32(le.Uint32(b[28:])),
		Iteration: int32(le.Uint32(b[32:])),
	}
	h.sequence = le.Uint32(b[36:])
	n := le.Uint32(b[40:])
	payload := b[headerSize:]
	if uint64(n) != uint64(len(payload)) {
		return h, nil, malformed("frame header says %d payload bytes, the frame has %d", n, len(payload))
	}
	crc := frameCRC(b[:44], payload)
	if got := le.Uint32(b[44:]); got != crc {
		return h, nil, malformed("frame checksum %#08x, computed %#08x", got, crc)
	}
	switch h.kind {
	case kindAny, kindMax:
		if !h.last || h.sequence != 0 || len(payload) != 8 {
			return h, nil, malformed("a %s frame is not one 8-byte chunk", h.kind)
		}
	case kindAbort:
		if !h.last || h.sequence != 0 {
			return h, nil, malformed("an abort frame is not one chunk")
		}
	}
	return h, payload, nil
}
