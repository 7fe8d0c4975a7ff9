package gateway

import (
	"github.com/rockstream/rockstream/internal/types"
)

// appendBinary appends v's binary wire format.
func appendBinary(dst []byte, v types.Value, t types.Type) ([]byte, error) {
	return types.AppendBinary(dst, v, t)
}

// parseBinary decodes a parameter sent in binary format.
func parseBinary(src []byte, t types.Type) (types.Value, error) {
	return types.ParseBinary(src, t)
}
