// Package lossyfs does to a test's in-memory file system what a device
// that failed an fsync may do: drop the tail of a write-ahead log that was
// written but never synced. Tests of the storage and the engine use it to
// make a commit of unknown outcome come out absent.
//
// Invariant: it only ever shortens the newest log of a directory to a
// length it had before, never changes the bytes it keeps.
package lossyfs

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// NewestLog returns the path of dir's newest write-ahead log.
func NewestLog(fs vfs.FS, dir string) (string, error) {
	names, err := fs.List(dir)
	if err != nil {
		return "", err
	}
	names = slices.DeleteFunc(names, func(n string) bool { return !strings.HasSuffix(n, ".log") })
	if len(names) == 0 {
		return "", fmt.Errorf("lossyfs: no write-ahead log in %s", dir)
	}
	slices.Sort(names)
	return fs.PathJoin(dir, names[len(names)-1]), nil
}

// DropTail cuts the file at path back to size bytes.
func DropTail(fs vfs.FS, path string, size int64) error {
	f, err := fs.Open(path)
	if err != nil {
		return err
	}
	data := make([]byte, size)
	_, err = io.ReadFull(f, data)
	if err := errors.Join(err, f.Close()); err != nil {
		return err
	}
	w, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return errors.Join(err, w.Sync(), w.Close())
}
