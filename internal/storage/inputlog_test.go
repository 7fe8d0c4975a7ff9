package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/rockstream/rockstream/internal/errs"
)

// inputLogs opens an input log in each kind of location: a file://
// directory, S3 (gofakes3 on loopback) and a memblob bucket. open opens
// another handle on the same log, as another process would.
func inputLogs(t *testing.T) []struct {
	name string
	open func(t *testing.T) *InputLog
} {
	file := fileLocation(t)
	s3 := s3Location(t)
	mem := memblob.OpenBucket(nil)
	opener := func(url string) func(t *testing.T) *InputLog {
		return func(t *testing.T) *InputLog {
			l, err := OpenInputLog(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.Close() })
			return l
		}
	}
	return []struct {
		name string
		open func(t *testing.T) *InputLog
	}{
		{"file", opener(file.url)},
		{"s3", opener(s3.url)},
		{"mem", func(t *testing.T) *InputLog { return &InputLog{bucket: mem, url: "mem"} }},
	}
}

func TestInputLogAppendReadLatestTruncate(t *testing.T) {
	ctx := context.Background()
	for _, loc := range inputLogs(t) {
		t.Run(loc.name, func(t *testing.T) {
			l := loc.open(t)
			if _, ok, err := l.Latest(ctx); err != nil || ok {
				t.Fatalf("empty log: latest ok=%v err=%v", ok, err)
			}
			if _, err := l.Read(ctx, 1); errs.CodeOf(err) != errs.UndefinedObject {
				t.Fatalf("read of a missing entry: %v", err)
			}
			for _, e := range []uint64{1, 2, 3, 9, 10, 11, 100} {
				if err := l.Append(ctx, e, 7, []byte(fmt.Sprintf("input of %d", e))); err != nil {
					t.Fatal(err)
				}
			}
			// An empty payload is an entry too.
			if err := l.Append(ctx, 101, 8, nil); err != nil {
				t.Fatal(err)
			}
			got, err := l.Read(ctx, 10)
			if err != nil || got.Epoch != 10 || got.Revision != 7 || string(got.Payload) != "input of 10" {
				t.Fatalf("read 10: %+v %v", got, err)
			}
			if got, err := l.Read(ctx, 101); err != nil || len(got.Payload) != 0 || got.Revision != 8 {
				t.Fatalf("read 101: %+v %v", got, err)
			}
			if e, ok, err := l.Latest(ctx); err != nil || !ok || e != 101 {
				t.Fatalf("latest %d %v %v, want 101", e, ok, err)
			}
			// A retry with the same contents succeeds; other contents fail.
			if err := l.Append(ctx, 10, 7, []byte("input of 10")); err != nil {
				t.Fatalf("retry: %v", err)
			}
			err = l.Append(ctx, 10, 9, []byte("other"))
			if errs.CodeOf(err) != errs.DuplicateObject || !errors.Is(err, ErrInputEntryExists) || !strings.Contains(err.Error(), "revision 7") {
				t.Fatalf("overwrite: %v", err)
			}
			n, err := l.Truncate(ctx, 10)
			if err != nil || n != 4 {
				t.Fatalf("truncate: %d %v, want 4", n, err)
			}
			if _, err := l.Read(ctx, 9); errs.CodeOf(err) != errs.UndefinedObject {
				t.Fatalf("read of a truncated entry: %v", err)
			}
			if got, err := l.Read(ctx, 10); err != nil || string(got.Payload) != "input of 10" {
				t.Fatalf("read 10 after truncation: %v", err)
			}
			if n, err := l.Truncate(ctx, 10); err != nil || n != 0 {
				t.Fatalf("second truncate: %d %v", n, err)
			}
		})
	}
}

// TestInputLogWriteOnceRace has appenders, each with a handle of its own,
// append different inputs for the same epochs at once: for each epoch
// exactly one succeeds and every reader reads its input.
func TestInputLogWriteOnceRace(t *testing.T) {
	ctx := context.Background()
	const appenders, epochs = 6, 5
	for _, loc := range inputLogs(t) {
		t.Run(loc.name, func(t *testing.T) {
			logs := make([]*InputLog, appenders)
			for i := range logs {
				logs[i] = loc.open(t)
			}
			for e := uint64(1); e <= epochs; e++ {
				var wg sync.WaitGroup
				errsOf := make([]error, appenders)
				start := make(chan struct{})
				for i, l := range logs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						errsOf[i] = l.Append(ctx, e, uint64(i), bytes.Repeat([]byte{byte('a' + i)}, 1000+i))
					}()
				}
				close(start)
				wg.Wait()
				winner := -1
				for i, err := range errsOf {
					switch {
					case err == nil && winner >= 0:
						t.Fatalf("epoch %d: appenders %d and %d both succeeded", e, winner, i)
					case err == nil:
						winner = i
					case !errors.Is(err, ErrInputEntryExists):
						t.Fatalf("epoch %d: appender %d: %v", e, i, err)
					}
				}
				if winner < 0 {
					t.Fatalf("epoch %d: no appender succeeded", e)
				}
				for _, l := range logs {
					got, err := l.Read(ctx, e)
					if err != nil || got.Revision != uint64(winner) || len(got.Payload) != 1000+winner {
						t.Fatalf("epoch %d: read %d/%d bytes, %v; the winner was %d", e, got.Revision, len(got.Payload), err, winner)
					}
				}
			}
		})
	}
}

// TestInputEntryCorrupt: every kind of damage to an entry is a precise
// error.
func TestInputEntryCorrupt(t *testing.T) {
	good := EncodeInputEntry(nil, InputEntry{Epoch: 42, Revision: 3, Payload: []byte("sealed input")})
	if e, err := DecodeInputEntry("e", good); err != nil || e.Epoch != 42 || e.Revision != 3 || string(e.Payload) != "sealed input" {
		t.Fatalf("decode: %+v %v", e, err)
	}
	damage := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	for _, c := range []struct {
		name string
		raw  []byte
		code errs.Code
		want string
	}{
		{"short", good[:20], errs.DataCorrupted, "has 20 bytes, less than its 40-byte header"},
		{"magic", damage(func(b []byte) []byte { b[0] = 'X'; return b }), errs.DataCorrupted, "not the magic"},
		{"header", damage(func(b []byte) []byte { b[9] ^= 1; return b }), errs.DataCorrupted, "its header has CRC32C"},
		{"payload", damage(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), errs.DataCorrupted, "its payload has CRC32C"},
		{"truncated", good[:len(good)-3], errs.DataCorrupted, "records a 12-byte payload, but 9 bytes follow"},
		{"extended", append(bytes.Clone(good), 'x'), errs.DataCorrupted, "but 13 bytes follow"},
	} {
		_, err := DecodeInputEntry("inputlog/42", c.raw)
		if errs.CodeOf(err) != c.code || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %s containing %q", c.name, err, c.code, c.want)
		}
	}

	// A damaged object in a log is read as such.
	ctx := context.Background()
	dir := t.TempDir()
	l, err := OpenInputLog(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(ctx, 5, 1, []byte("payload")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "inputlog", fmt.Sprintf("%020d", 5))
	raw, _ := os.ReadFile(p)
	raw[len(raw)-2] ^= 0x10
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Read(ctx, 5); errs.CodeOf(err) != errs.DataCorrupted || !strings.Contains(err.Error(), "inputlog/00000000000000000005") {
		t.Fatalf("read of a damaged entry: %v", err)
	}
}
