package zset

import (
	"encoding/binary"

	"github.com/rockstream/rockstream/internal/types"
)

// jsonb in keys (docs/format/keys.md): keyTagJsonb, then the top-level
// value. A top-level object is keyJSONTopObject, its pair count and pairs;
// a top-level array or scalar is keyJSONTopArray, its element count (1 for
// a scalar), keyJSONRawScalar or keyJSONRealArray, and its elements. That
// is jsonb's order (compareJsonbContainers): objects after everything,
// then by count, then a scalar before an array of one element. Nested
// nodes are a kind byte in jsonb's type order and the node's body:
// strings escaped as text keys, numbers as numeric keys, booleans one
// byte, arrays their count and elements, objects their count and
// key/value pairs in storage order. Counts are 4 big-endian bytes.
const (
	keyTagJsonb byte = 0x3a

	keyJSONTopArray  byte = 0x01
	keyJSONTopObject byte = 0x02

	keyJSONRawScalar byte = 0x00
	keyJSONRealArray byte = 0x01

	// keyJSONKindBase + JSONKind is a nested node's kind byte.
	keyJSONKindBase byte = 0x01
)

// appendJSONBKey appends a jsonb value's key body (after its tag).
func appendJSONBKey(dst []byte, j *types.JSON) []byte {
	switch j.Kind {
	case types.JSONObject:
		return appendJSONKeyBody(append(dst, keyJSONTopObject), j)
	case types.JSONArray:
		dst = binary.BigEndian.AppendUint32(append(dst, keyJSONTopArray), uint32(len(j.Elems)))
		dst = append(dst, keyJSONRealArray)
		for _, e := range j.Elems {
			dst = appendJSONNodeKey(dst, e)
		}
		return dst
	}
	dst = binary.BigEndian.AppendUint32(append(dst, keyJSONTopArray), 1)
	return appendJSONNodeKey(append(dst, keyJSONRawScalar), j)
}

// appendJSONNodeKey appends a nested node: its kind byte and body.
func appendJSONNodeKey(dst []byte, j *types.JSON) []byte {
	dst = append(dst, keyJSONKindBase+byte(j.Kind))
	switch j.Kind {
	case types.JSONString:
		return appendEscaped(dst, j.Str)
	case types.JSONNumber:
		return appendNumericKey(dst, j.Num)
	case types.JSONBool:
		if j.Bool {
			return append(dst, 1)
		}
		return append(dst, 0)
	case types.JSONArray:
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(j.Elems)))
		for _, e := range j.Elems {
			dst = appendJSONNodeKey(dst, e)
		}
		return dst
	case types.JSONObject:
		return appendJSONKeyBody(dst, j)
	}
	return dst
}

// appendJSONKeyBody appends an object's count and pairs.
func appendJSONKeyBody(dst []byte, j *types.JSON) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(j.Keys)))
	for i, k := range j.Keys {
		dst = appendEscaped(dst, k)
		dst = appendJSONNodeKey(dst, j.Vals[i])
	}
	return dst
}

// decodeJSONBKey decodes a jsonb key body, each byte XORed with mask.
func decodeJSONBKey(b []byte, mask byte) (*types.JSON, []byte, error) {
	if len(b) == 0 {
		return nil, b, corruptKey("truncated jsonb")
	}
	switch b[0] ^ mask {
	case keyJSONTopObject:
		return decodeJSONObjectKey(b[1:], mask, 0)
	case keyJSONTopArray:
		n, rest, err := readFixed(b[1:], 4, mask)
		if err != nil || len(rest) == 0 {
			return nil, b, corruptKey("truncated jsonb")
		}
		switch rest[0] ^ mask {
		case keyJSONRawScalar:
			j, rest, err := decodeJSONNodeKey(rest[1:], mask, 0)
			if err != nil || n != 1 || j.Kind >= types.JSONArray {
				return nil, b, corruptKey("bad jsonb scalar")
			}
			return j, rest, nil
		case keyJSONRealArray:
			return decodeJSONElems(rest[1:], mask, n, 0)
		}
	}
	return nil, b, corruptKey("bad jsonb")
}

// maxJSONKeyDepth bounds the nesting a key decoder follows.
const maxJSONKeyDepth = 10000

func decodeJSONNodeKey(b []byte, mask byte, depth int) (*types.JSON, []byte, error) {
	if len(b) == 0 || depth > maxJSONKeyDepth {
		return nil, b, corruptKey("truncated jsonb")
	}
	kind := types.JSONKind((b[0] ^ mask) - keyJSONKindBase)
	body := b[1:]
	switch kind {
	case types.JSONNull:
		return types.JSONNullNode(), body, nil
	case types.JSONString:
		s, rest, err := decodeEscaped(body, mask)
		if err != nil {
			return nil, b, err
		}
		return types.JSONStringNode(s), rest, nil
	case types.JSONNumber:
		d, rest, err := decodeNumericKey(body, mask)
		if err != nil {
			return nil, b, err
		}
		return types.JSONNumberNode(d), rest, nil
	case types.JSONBool:
		u, rest, err := readFixed(body, 1, mask)
		if err != nil || u > 1 {
			return nil, b, corruptKey("bad jsonb boolean")
		}
		return types.JSONBoolNode(u == 1), rest, nil
	case types.JSONArray:
		n, rest, err := readFixed(body, 4, mask)
		if err != nil {
			return nil, b, err
		}
		return decodeJSONElems(rest, mask, n, depth+1)
	case types.JSONObject:
		return decodeJSONObjectKey(body, mask, depth+1)
	}
	return nil, b, corruptKey("bad jsonb kind")
}

func decodeJSONElems(b []byte, mask byte, n uint64, depth int) (*types.JSON, []byte, error) {
	if n > uint64(len(b)) {
		return nil, b, corruptKey("bad jsonb array length")
	}
	elems := make([]*types.JSON, 0, n)
	for i := uint64(0); i < n; i++ {
		e, rest, err := decodeJSONNodeKey(b, mask, depth)
		if err != nil {
			return nil, b, err
		}
		elems, b = append(elems, e), rest
	}
	return types.JSONArrayNode(elems), b, nil
}

func decodeJSONObjectKey(b []byte, mask byte, depth int) (*types.JSON, []byte, error) {
	n, rest, err := readFixed(b, 4, mask)
	if err != nil || n > uint64(len(rest)) {
		return nil, b, corruptKey("bad jsonb object")
	}
	keys := make([]string, 0, n)
	vals := make([]*types.JSON, 0, n)
	for i := uint64(0); i < n; i++ {
		k, r, err := decodeEscaped(rest, mask)
		if err != nil {
			return nil, b, err
		}
		v, r, err := decodeJSONNodeKey(r, mask, depth)
		if err != nil {
			return nil, b, err
		}
		keys, vals, rest = append(keys, k), append(vals, v), r
	}
	return types.NewJSONObject(keys, vals), rest, nil
}
