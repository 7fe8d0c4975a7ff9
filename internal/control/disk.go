package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/rockstream/rockstream/internal/cluster"
)

// Disk is a worker's local durable state: the disk actions of its machine
// (ActDiskPrepare, ActDiskApply, ActDiskReset) and the state a new
// incarnation starts from. Each method returns once its change is durable.
type Disk interface {
	Load() (cluster.Disk, error)
	Prepare(e cluster.Epoch, delta cluster.Batch) error
	Apply(e cluster.Epoch, delta cluster.Batch) error
	Reset(e cluster.Epoch, state cluster.Batch) error
}

// FileDisk is a Disk kept in one JSON file, replaced atomically (written
// beside, synced, renamed) on every change. It suits the keyed-sum state
// of the protocol's machines, whose state is small.
type FileDisk struct {
	path string

	mu   sync.Mutex
	disk cluster.Disk // what the file holds
}

// OpenFileDisk opens the disk kept in dir, creating dir if needed.
func OpenFileDisk(dir string) (*FileDisk, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("control: disk %s: %w", dir, err)
	}
	d := &FileDisk{path: filepath.Join(dir, "worker.json")}
	data, err := os.ReadFile(d.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.disk.State = cluster.Batch{}
	case err != nil:
		return nil, fmt.Errorf("control: disk: %w", err)
	default:
		if err := json.Unmarshal(data, &d.disk); err != nil {
			return nil, fmt.Errorf("control: disk %s: %w", d.path, err)
		}
		if d.disk.State == nil {
			d.disk.State = cluster.Batch{}
		}
	}
	return d, nil
}

// Load implements Disk.
func (d *FileDisk) Load() (cluster.Disk, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := cluster.Disk{State: cluster.Batch{}, Applied: d.disk.Applied, Prepared: d.disk.Prepared}
	cluster.Merge(c.State, d.disk.State)
	return c, nil
}

// Prepare implements Disk.
func (d *FileDisk) Prepare(e cluster.Epoch, delta cluster.Batch) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	next := d.disk
	next.Prepared = &cluster.Prepared{Epoch: e, Delta: delta}
	return d.writeLocked(next)
}

// Apply implements Disk.
func (d *FileDisk) Apply(e cluster.Epoch, delta cluster.Batch) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	state := cluster.Batch{}
	cluster.Merge(state, d.disk.State)
	cluster.Merge(state, delta)
	return d.writeLocked(cluster.Disk{State: state, Applied: e})
}

// Reset implements Disk.
func (d *FileDisk) Reset(e cluster.Epoch, state cluster.Batch) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := cluster.Batch{}
	cluster.Merge(s, state)
	return d.writeLocked(cluster.Disk{State: s, Applied: e})
}

func (d *FileDisk) writeLocked(next cluster.Disk) error {
	data, err := json.Marshal(next)
	if err != nil {
		return fmt.Errorf("control: disk: %w", err)
	}
	tmp := d.path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("control: disk: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, d.path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(d.path))
	}
	if err != nil {
		return fmt.Errorf("control: disk %s: %w", d.path, err)
	}
	d.disk = next
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}
