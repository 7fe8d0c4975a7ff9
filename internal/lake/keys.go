package lake

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The key layout (docs/format/lake.md). Every key starts with a one-byte
// namespace; integers are big-endian so that keys sort numerically.
//
//	'M' name                               meta value (revision, next OID, tid counters, schemas)
//	0x04 "frontier"                        the revision again, raw u64be (epochKey)
//	'T' oid:4 begin:8 end:8                a version of a table definition
//	'R' oid:4 tid:8 begin:8 end:8          a row version
//	'P' oid:4 key...                       primary key of a live row → tid:8 begin:8
//
// begin and end are store revisions: a version is visible at revision r
// when begin <= r < end; a live version has end = liveEnd. Ending a
// version rewrites its key with the new end in the same batch that makes
// the change, so visibility is read from the key alone.
const (
	nsMeta  = 'M'
	nsTable = 'T'
	nsRow   = 'R'
	nsPK    = 'P'
)

// liveEnd is the end revision of a version that has not ended.
const liveEnd = math.MaxUint64

// Record kinds in the storage envelope (storage.EncodeRecord).
const (
	recTable = 1
	recRow   = 2
	recMeta  = 3
	recPK    = 4
)

// formatVersion is the version of every payload format in this file and
// rowcodec.go.
const formatVersion = 1

func metaKey(name string) []byte { return append([]byte{nsMeta}, name...) }

// epochKey holds the last committed revision again, as 8 bytes
// big-endian outside any envelope: it is the storage layer's epoch key
// (storage.Options.EpochKey), so that the identity file records how far
// the lake's durable commits reach and Open and rockstream doctor
// cross-check it. Its bytes are those of the engine's frontier key
// (runtime.FrontierKey), so that a tool opening a directory before it
// knows what the directory holds reads either one's epoch.
var epochKey = []byte{0x04, 'f', 'r', 'o', 'n', 't', 'i', 'e', 'r'}

// EpochKey returns the key a lake's revision is recorded under for the
// storage layer's identity file (storage.Options.EpochKey).
func EpochKey() []byte { return append([]byte(nil), epochKey...) }

func tidCounterKey(oid uint32) []byte {
	return binary.BigEndian.AppendUint32(metaKey("tid/"), oid)
}

func tableKey(oid uint32, begin, end uint64) []byte {
	k := make([]byte, 0, 21)
	k = append(k, nsTable)
	k = binary.BigEndian.AppendUint32(k, oid)
	k = binary.BigEndian.AppendUint64(k, begin)
	return binary.BigEndian.AppendUint64(k, end)
}

func rowPrefix(oid uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{nsRow}, oid)
}

func rowKey(oid uint32, tid int64, begin, end uint64) []byte {
	k := make([]byte, 0, 29)
	k = append(k, rowPrefix(oid)...)
	k = binary.BigEndian.AppendUint64(k, uint64(tid))
	k = binary.BigEndian.AppendUint64(k, begin)
	return binary.BigEndian.AppendUint64(k, end)
}

// rowKeyParts decodes a row key.
func rowKeyParts(k []byte) (oid uint32, tid int64, begin, end uint64, err error) {
	if len(k) != 29 || k[0] != nsRow {
		return 0, 0, 0, 0, fmt.Errorf("%w: row key %x has the wrong shape", ErrCorrupted, k)
	}
	return binary.BigEndian.Uint32(k[1:5]), int64(binary.BigEndian.Uint64(k[5:13])),
		binary.BigEndian.Uint64(k[13:21]), binary.BigEndian.Uint64(k[21:29]), nil
}

func tableKeyParts(k []byte) (oid uint32, begin, end uint64, err error) {
	if len(k) != 21 || k[0] != nsTable {
		return 0, 0, 0, fmt.Errorf("%w: table key %x has the wrong shape", ErrCorrupted, k)
	}
	return binary.BigEndian.Uint32(k[1:5]), binary.BigEndian.Uint64(k[5:13]), binary.BigEndian.Uint64(k[13:21]), nil
}

// pkKey encodes the primary key values of a row so that equal keys give
// equal bytes: integers as 8 bytes with the sign bit flipped, text with
// 0x00 escaped as 0x00 0xFF and terminated by 0x00 0x01.
func pkKey(oid uint32, vals []Value) ([]byte, error) {
	k := binary.BigEndian.AppendUint32([]byte{nsPK}, oid)
	for _, v := range vals {
		if v.Null {
			return nil, errors.New("lake: NULL in a primary key")
		}
		switch {
		case isNumber(v.T) && v.T != TFloat4 && v.T != TFloat8:
			k = binary.BigEndian.AppendUint64(k, uint64(v.I)^(1<<63))
		case v.T == TBool || v.T == TTimestamptz:
			k = binary.BigEndian.AppendUint64(k, uint64(v.I)^(1<<63))
		case v.T == TFloat4 || v.T == TFloat8:
			k = binary.BigEndian.AppendUint64(k, math.Float64bits(v.F))
		default:
			for i := 0; i < len(v.S); i++ {
				if v.S[i] == 0 {
					k = append(k, 0, 0xFF)
				} else {
					k = append(k, v.S[i])
				}
			}
			k = append(k, 0, 1)
		}
	}
	return k, nil
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

func pkPrefix(oid uint32) []byte { return binary.BigEndian.AppendUint32([]byte{nsPK}, oid) }

func indexPrefix(oid uint32) []byte { return binary.BigEndian.AppendUint32([]byte{nsIndex}, oid) }
