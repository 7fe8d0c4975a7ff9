package crashtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// Journal record types.
const (
	recOpen   = "open"   // the child opened the store; Epoch is what it recovered
	recReady  = "ready"  // the schema is complete
	recIntent = "intent" // a transaction is about to start
	recAck    = "ack"    // its COMMIT (or autocommit statement) succeeded
	recNack   = "nack"   // it failed or rolled back, as intended
)

// Transaction shapes.
const (
	shapeAuto     = "auto"     // one autocommit statement
	shapeAutoFail = "autofail" // one autocommit statement that must fail
	shapeBlock    = "block"    // BEGIN; statements; COMMIT
	shapeRollback = "rollback" // BEGIN; statements; ROLLBACK
	shapeFail     = "fail"     // BEGIN; statements, one failing; COMMIT (which rolls back)
)

// committable reports whether a transaction of this shape may commit.
func committable(shape string) bool { return shape == shapeAuto || shape == shapeBlock }

// record is one line of the journal.
type record struct {
	T     string `json:"t"`
	Run   int    `json:"run,omitempty"`
	ID    int64  `json:"id,omitempty"`
	W     int    `json:"w"`
	Shape string `json:"shape,omitempty"`
	Ops   []op   `json:"ops,omitempty"`
	Epoch uint64 `json:"epoch,omitempty"`
}

// journal appends records to a file, one JSON line each, written with a
// single write so that a killed writer leaves at most a torn last line.
type journal struct {
	mu sync.Mutex // serializes appends
	f  *os.File
}

func openJournal(path string) (*journal, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &journal{f: f}, nil
}

// append writes r, and with sync waits until it is on disk.
func (j *journal) append(r record, sync bool) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(line); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if sync {
		if err := j.f.Sync(); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	return nil
}

func (j *journal) close() error { return j.f.Close() }

// readJournal returns the records after offset and the offset after the
// last whole line. A torn last line (the writer died inside its write) is
// cut off the file: its write had not returned, so what it would have
// recorded had not happened yet (an intent precedes the transaction) or
// is treated as unknown (an ack lost is a transaction in doubt).
func readJournal(path string, offset int64) ([]record, int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if os.IsNotExist(err) {
		return nil, offset, nil
	}
	if err != nil {
		return nil, offset, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, offset, err
	}
	whole := bytes.LastIndexByte(data, '\n') + 1
	if whole < len(data) {
		if err := f.Truncate(offset + int64(whole)); err != nil {
			return nil, offset, err
		}
	}
	var out []record
	for _, line := range bytes.SplitAfter(data[:whole], []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r record
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, offset, fmt.Errorf("journal line %q: %w", line, err)
		}
		out = append(out, r)
	}
	return out, offset + int64(whole), nil
}
