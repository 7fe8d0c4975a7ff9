package storage

import (
	"context"
	"encoding/json"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/rockstream/rockstream/internal/errs"
)

// PruneResult says what PruneCheckpoints kept and deleted.
type PruneResult struct {
	// Kept are the ids of the checkpoints kept, oldest first.
	Kept []string `json:"kept"`
	// Deleted are the ids of the checkpoints deleted, oldest first.
	Deleted []string `json:"deleted"`
	// DeletedObjects counts every object deleted (manifests, per-checkpoint
	// files and shared tables); DeletedTables the shared tables among them.
	DeletedObjects int           `json:"deleted_objects"`
	DeletedTables  TransferStats `json:"deleted_tables"`
}

// PruneCheckpoints keeps the keep newest complete checkpoints at url and
// deletes the others, then deletes every shared table no kept checkpoint
// lists. The checkpoint `latest` names is always kept. A checkpoint
// directory without a manifest that is older than the oldest kept
// checkpoint is an interrupted upload and is deleted; one newer may be an
// upload under way and is left alone.
//
// A checkpoint's manifest is deleted before its files, so that an
// interrupted prune never leaves a manifest naming missing files. Prune
// assumes that it is the only writer of url while it runs: a checkpoint
// being uploaded by another process to the same url at the same time may
// lose tables it decided to reuse.
func PruneCheckpoints(ctx context.Context, url string, keep int) (*PruneResult, error) {
	if keep < 1 {
		return nil, errs.Newf(errs.InvalidParameterValue, "storage: the number of checkpoints to keep must be at least 1, not %d", keep)
	}
	bucket, err := openBucket(ctx, url, false)
	if err != nil {
		return nil, err
	}
	defer bucket.Close()
	latest, err := readLatest(ctx, bucket)
	if err != nil {
		if isNotFound(err) {
			return nil, errs.Newf(errs.UndefinedObject, "storage: there is no checkpoint at %s", url)
		}
		return nil, withURL(err, url)
	}
	ids, err := listCheckpointIDs(ctx, bucket)
	if err != nil {
		return nil, withURL(err, url)
	}
	// The complete checkpoints, newest first, with their manifests.
	type complete struct {
		id string
		m  *Manifest
	}
	var done []complete
	manifestless := map[string]bool{}
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		if id == latest.ID {
			done = append(done, complete{id, latest})
			continue
		}
		m, err := readManifest(ctx, bucket, checkpointsPrefix+id+"/manifest.json")
		switch {
		case isNotFound(err):
			manifestless[id] = true
			continue
		case err != nil:
			return nil, withURL(err, url)
		}
		done = append(done, complete{id, m})
	}
	res := &PruneResult{}
	kept := map[string]bool{latest.ID: true}
	referenced := map[string]bool{}
	for _, f := range latest.Files {
		referenced[f.Key] = true
	}
	for _, c := range done {
		if len(kept) >= keep && !kept[c.id] {
			continue
		}
		kept[c.id] = true
		for _, f := range c.m.Files {
			referenced[f.Key] = true
		}
	}
	oldestKept := latest.ID
	for id := range kept {
		oldestKept = min(oldestKept, id)
	}
	for _, id := range ids {
		switch {
		case kept[id]:
			res.Kept = append(res.Kept, id)
			continue
		case manifestless[id] && id > oldestKept:
			continue
		}
		n, err := deleteCheckpoint(ctx, bucket, id)
		res.DeletedObjects += n
		if err != nil {
			return res, withURL(err, url)
		}
		if n > 0 {
			res.Deleted = append(res.Deleted, id)
		}
	}
	// Shared tables no kept checkpoint lists.
	it := bucket.List(&blob.ListOptions{Prefix: sharedPrefix})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return res, wrapf(errs.IOError, err, "storage: listing %s in %s", sharedPrefix, url)
		}
		if obj.IsDir || referenced[obj.Key] {
			continue
		}
		if err := bucket.Delete(ctx, obj.Key); err != nil && !isNotFound(err) {
			return res, wrapf(errs.IOError, err, "storage: deleting %s from %s", obj.Key, url)
		}
		res.DeletedObjects++
		res.DeletedTables.Files++
		res.DeletedTables.Bytes += obj.Size
	}
	return res, nil
}

// listCheckpointIDs returns the ids of the checkpoint directories in
// bucket, oldest first.
func listCheckpointIDs(ctx context.Context, bucket *blob.Bucket) ([]string, error) {
	var ids []string
	it := bucket.List(&blob.ListOptions{Prefix: checkpointsPrefix, Delimiter: "/"})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, wrapf(errs.IOError, err, "storage: listing %s", checkpointsPrefix)
		}
		if !obj.IsDir {
			continue
		}
		id := strings.TrimSuffix(strings.TrimPrefix(obj.Key, checkpointsPrefix), "/")
		if id != "" {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// readManifest reads and checks the manifest at key, which no pointer
// vouches for: its own structure is all that is checked. A missing
// manifest returns an error for which isNotFound is true.
func readManifest(ctx context.Context, bucket *blob.Bucket, key string) (*Manifest, error) {
	body, err := bucket.ReadAll(ctx, key)
	if err != nil {
		if isNotFound(err) {
			return nil, err
		}
		return nil, wrapf(errs.IOError, err, "storage: reading %s", key)
	}
	var m Manifest
	if err := json.Unmarshal(body, &m); err != nil || m.Format != ManifestFormat {
		return nil, corrupted(err, "storage: checkpoint manifest %s does not decode", key)
	}
	if err := m.check(); err != nil {
		return nil, corrupted(err, "storage: checkpoint manifest %s is invalid", key)
	}
	return &m, nil
}

// deleteCheckpoint deletes a checkpoint's directory, its manifest first,
// and returns how many objects it deleted.
func deleteCheckpoint(ctx context.Context, bucket *blob.Bucket, id string) (int, error) {
	dir := checkpointsPrefix + id + "/"
	manifestKey := dir + "manifest.json"
	n := 0
	if err := bucket.Delete(ctx, manifestKey); err == nil {
		n++
	} else if !isNotFound(err) {
		return n, wrapf(errs.IOError, err, "storage: deleting %s", manifestKey)
	}
	it := bucket.List(&blob.ListOptions{Prefix: dir})
	var keys []string
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, wrapf(errs.IOError, err, "storage: listing %s", dir)
		}
		if !obj.IsDir {
			keys = append(keys, obj.Key)
		}
	}
	for _, k := range keys {
		if err := bucket.Delete(ctx, k); err != nil && !isNotFound(err) {
			return n, wrapf(errs.IOError, err, "storage: deleting %s", k)
		}
		n++
	}
	return n, nil
}

// checkpointIDRe is the form of a checkpoint id (newCheckpointID).
var checkpointIDRe = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}\.[0-9]{9}Z-[0-9a-f]{8}$`)

// readCheckpoint reads the manifest of checkpoint id at url, or of the
// latest one when id is "".
func readCheckpoint(ctx context.Context, bucket *blob.Bucket, url, id string) (*Manifest, error) {
	if id == "" {
		m, err := readLatest(ctx, bucket)
		if err != nil {
			if isNotFound(err) {
				return nil, errs.Newf(errs.UndefinedObject, "storage: there is no checkpoint at %s", url)
			}
			return nil, withURL(err, url)
		}
		return m, nil
	}
	if !checkpointIDRe.MatchString(id) {
		return nil, errs.Newf(errs.InvalidParameterValue, "storage: %q is not a checkpoint id (as in 20261201T210641.774029376Z-7b98bef2)", id)
	}
	m, err := readManifest(ctx, bucket, checkpointsPrefix+id+"/manifest.json")
	if err != nil {
		if isNotFound(err) {
			return nil, errs.Newf(errs.UndefinedObject, "storage: there is no checkpoint %s at %s", id, url)
		}
		return nil, withURL(err, url)
	}
	if m.ID != id {
		return nil, corrupted(nil, "storage: the manifest of checkpoint %s at %s names checkpoint %s", id, url, m.ID)
	}
	return m, nil
}

// CheckpointInfo describes one complete checkpoint at a location.
type CheckpointInfo struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	Epoch   uint64    `json:"epoch"`
	Files   int       `json:"files"`
	Bytes   int64     `json:"bytes"`
	Latest  bool      `json:"latest"`
}

// ListCheckpoints lists the complete checkpoints at url (those with a
// manifest), oldest first.
func ListCheckpoints(ctx context.Context, url string) ([]CheckpointInfo, error) {
	bucket, err := openBucket(ctx, url, false)
	if err != nil {
		return nil, err
	}
	defer bucket.Close()
	latest, err := readLatest(ctx, bucket)
	if err != nil && !isNotFound(err) {
		return nil, withURL(err, url)
	}
	ids, err := listCheckpointIDs(ctx, bucket)
	if err != nil {
		return nil, withURL(err, url)
	}
	var out []CheckpointInfo
	for _, id := range ids {
		m, err := readManifest(ctx, bucket, checkpointsPrefix+id+"/manifest.json")
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, withURL(err, url)
		}
		info := CheckpointInfo{ID: m.ID, Created: m.Created, Epoch: m.Epoch, Files: len(m.Files), Latest: latest != nil && latest.ID == m.ID}
		for _, f := range m.Files {
			info.Bytes += f.Size
		}
		out = append(out, info)
	}
	return out, nil
}
