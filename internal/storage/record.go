package storage

import (
	"encoding/binary"
	"hash/crc32"
)

// A record is a checksummed envelope for a durable value that must never
// be misread, such as a catalog entry (docs/format/storage.md):
//
//	offset  size  field
//	0       4     magic "RSr1"
//	4       1     kind (chosen by the caller: what the payload is)
//	5       2     format version of the payload, big-endian
//	7       4     payload length, big-endian
//	11      4     CRC32C (Castagnoli) of bytes 0..10 and the payload, big-endian
//	15      n     payload
const (
	recordMagic     = "RSr1"
	recordHeaderLen = 15
	recordCRCOffset = 11
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeRecord returns payload in a record envelope of the given kind and
// format version.
func EncodeRecord(kind byte, formatVersion uint16, payload []byte) []byte {
	return AppendRecord(make([]byte, 0, recordHeaderLen+len(payload)), kind, formatVersion, payload)
}

// AppendRecord appends the record of payload to dst and returns the
// extended slice.
func AppendRecord(dst []byte, kind byte, formatVersion uint16, payload []byte) []byte {
	if uint64(len(payload)) > 1<<32-1 {
		panic("storage: record payload larger than 4 GiB")
	}
	start := len(dst)
	dst = append(dst, recordMagic...)
	dst = append(dst, kind)
	dst = binary.BigEndian.AppendUint16(dst, formatVersion)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	crc := crc32.Update(0, castagnoli, dst[start:])
	crc = crc32.Update(crc, castagnoli, payload)
	dst = binary.BigEndian.AppendUint32(dst, crc)
	return append(dst, payload...)
}

// DecodeRecord checks a record and returns its kind, format version and
// payload (which aliases b). A record that is truncated, has other magic
// bytes, a wrong length or a checksum that does not match returns an
// errs.DataCorrupted error saying which check failed; wrap it with the
// record's key or file so that the message names what is damaged.
func DecodeRecord(b []byte) (kind byte, version uint16, payload []byte, err error) {
	if len(b) < recordHeaderLen {
		return 0, 0, nil, recordCorrupted("it is %d bytes, shorter than the %d-byte header", len(b), recordHeaderLen)
	}
	if string(b[:4]) != recordMagic {
		return 0, 0, nil, recordCorrupted("its magic bytes are %q, not %q", b[:4], recordMagic)
	}
	n := binary.BigEndian.Uint32(b[7:11])
	if uint64(len(b)-recordHeaderLen) != uint64(n) {
		return 0, 0, nil, recordCorrupted("its header says %d payload bytes but it holds %d", n, len(b)-recordHeaderLen)
	}
	stored := binary.BigEndian.Uint32(b[recordCRCOffset:recordHeaderLen])
	crc := crc32.Update(0, castagnoli, b[:recordCRCOffset])
	crc = crc32.Update(crc, castagnoli, b[recordHeaderLen:])
	if crc != stored {
		return 0, 0, nil, recordCorrupted("its CRC32C is %08x but its contents sum to %08x", stored, crc)
	}
	return b[4], binary.BigEndian.Uint16(b[5:7]), b[recordHeaderLen:], nil
}

func recordCorrupted(format string, args ...any) error {
	return corrupted(nil, "storage: record failed its check: "+format, args...)
}
