package pgcdc

import (
	"encoding/json"
	"fmt"

	"github.com/jackc/pglogrepl"
)

// Progress is the source's position, committed in the same epoch as the
// changes it covers. A source without progress has not loaded its initial
// snapshot yet.
type Progress struct {
	// Slot is the replication slot the position belongs to.
	Slot string
	// LSN is the end LSN of the last upstream transaction applied, or the
	// slot's consistent point right after the snapshot.
	LSN pglogrepl.LSN
}

type progressJSON struct {
	Version int    `json:"v"`
	Slot    string `json:"slot"`
	LSN     string `json:"lsn"`
}

// Encode returns the progress bytes stored with an epoch.
func (p Progress) Encode() []byte {
	b, _ := json.Marshal(progressJSON{Version: 1, Slot: p.Slot, LSN: p.LSN.String()})
	return b
}

// DecodeProgress reads progress bytes written by Encode. Empty bytes are no
// progress (ok false).
func DecodeProgress(b []byte) (p Progress, ok bool, err error) {
	if len(b) == 0 {
		return Progress{}, false, nil
	}
	var j progressJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return Progress{}, false, fmt.Errorf("reading the source's progress: %w", err)
	}
	if j.Version != 1 {
		return Progress{}, false, fmt.Errorf("reading the source's progress: unknown version %d", j.Version)
	}
	lsn, err := pglogrepl.ParseLSN(j.LSN)
	if err != nil {
		return Progress{}, false, fmt.Errorf("reading the source's progress: %w", err)
	}
	return Progress{Slot: j.Slot, LSN: lsn}, true, nil
}
