package control

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rockstream/rockstream/internal/cluster"
)

// Keys is the layout of one cluster's keys in etcd, all under
// /rockstream/<cluster>/ (docs/format/cluster-etcd.md).
type Keys struct {
	prefix string
}

// NewKeys returns the layout of cluster name, which must be non-empty and
// free of '/'.
func NewKeys(name string) (Keys, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") {
		return Keys{}, fmt.Errorf("control: invalid cluster name %q: it must be non-empty and contain no '/'", name)
	}
	return Keys{prefix: "/rockstream/" + name + "/"}, nil
}

// Prefix is the common prefix of every key of the cluster.
func (k Keys) Prefix() string { return k.prefix }

// Members is the prefix of the membership keys, one per registered worker.
func (k Keys) Members() string { return k.prefix + "members/" }

// Member is the membership key of worker id, bound to its lease.
func (k Keys) Member(id cluster.NodeID) string { return k.Members() + string(id) }

// Assignment holds the bucket assignment; its modification revision is the
// fencing token.
func (k Keys) Assignment() string { return k.prefix + "assignment" }

// Committed holds the commit frontier, a decimal epoch.
func (k Keys) Committed() string { return k.prefix + "committed" }

// CommittedAt holds the epoch of the latest commit and when it was
// committed: "<epoch> <unix milliseconds>", written with committed.
func (k Keys) CommittedAt() string { return k.prefix + "committed_at" }

// Checkpoint holds the epoch of the latest recorded cluster checkpoint.
func (k Keys) Checkpoint() string { return k.prefix + "checkpoint" }

// Election is the prefix of the coordinator election's candidate keys.
// A candidate's value is the address of its node's gRPC endpoint, so the
// leader's value is where messages to the coordinator go.
func (k Keys) Election() string { return k.prefix + "election" }

// Nodes is the prefix of the nodes' endpoint keys.
func (k Keys) Nodes() string { return k.prefix + "nodes/" }

// Node holds the address of node id's gRPC endpoint, bound to a lease of
// the node's process.
func (k Keys) Node(id cluster.NodeID) string { return k.Nodes() + string(id) }

// Objects holds the location of the cluster's object store (file:///dir
// or s3://bucket/prefix), written by the control process.
func (k Keys) Objects() string { return k.prefix + "objects" }

// assignmentJSON is the stored form of an assignment: the registrations it
// was computed from and its buckets as contiguous ranges.
type assignmentJSON struct {
	Members map[cluster.NodeID]cluster.LeaseID `json:"members"`
	Ranges  []bucketRange                      `json:"ranges"`
}

type bucketRange struct {
	Owner cluster.NodeID `json:"owner"`
	First int            `json:"first"`
	Last  int            `json:"last"`
}

// EncodeAssignment is the value stored under Keys.Assignment.
func EncodeAssignment(a *cluster.Assignment) ([]byte, error) {
	j := assignmentJSON{Members: a.Members}
	if j.Members == nil {
		j.Members = map[cluster.NodeID]cluster.LeaseID{}
	}
	start := 0
	for b := 1; b <= cluster.NumBuckets; b++ {
		if b == cluster.NumBuckets || a.Owner[b] != a.Owner[start] {
			if a.Owner[start] == "" {
				return nil, fmt.Errorf("control: assignment leaves buckets %d-%d without an owner", start, b-1)
			}
			j.Ranges = append(j.Ranges, bucketRange{Owner: a.Owner[start], First: start, Last: b - 1})
			start = b
		}
	}
	return json.Marshal(j)
}

// DecodeAssignment parses a value stored under Keys.Assignment. It accepts
// only assignments that place every bucket exactly once on a member.
func DecodeAssignment(data []byte) (*cluster.Assignment, error) {
	var j assignmentJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("control: decode assignment: %w", err)
	}
	a := &cluster.Assignment{Members: j.Members}
	if a.Members == nil {
		a.Members = map[cluster.NodeID]cluster.LeaseID{}
	}
	next := 0
	for _, r := range j.Ranges {
		if r.First != next || r.Last < r.First || r.Last >= cluster.NumBuckets {
			return nil, fmt.Errorf("control: decode assignment: range %d-%d of %s does not continue at bucket %d", r.First, r.Last, r.Owner, next)
		}
		if _, ok := a.Members[r.Owner]; !ok {
			return nil, fmt.Errorf("control: decode assignment: owner %s of buckets %d-%d is not a member", r.Owner, r.First, r.Last)
		}
		for b := r.First; b <= r.Last; b++ {
			a.Owner[b] = r.Owner
		}
		next = r.Last + 1
	}
	if next != cluster.NumBuckets {
		return nil, fmt.Errorf("control: decode assignment: buckets %d-%d have no owner", next, cluster.NumBuckets-1)
	}
	return a, nil
}

func encodeEpoch(e cluster.Epoch) string { return strconv.FormatUint(uint64(e), 10) }

func decodeEpoch(key string, v []byte) (cluster.Epoch, error) {
	e, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("control: %s holds %q, not an epoch", key, v)
	}
	return cluster.Epoch(e), nil
}

// CommitTime is the value of Keys.CommittedAt: an epoch and when the
// coordinator committed it, by its clock. Epoch 0 means no commit is
// recorded.
type CommitTime struct {
	Epoch cluster.Epoch
	At    time.Time
}

func encodeCommitTime(e cluster.Epoch, at time.Time) string {
	return encodeEpoch(e) + " " + strconv.FormatInt(at.UnixMilli(), 10)
}

func decodeCommitTime(key string, v []byte) (CommitTime, error) {
	es, ms, ok := strings.Cut(string(v), " ")
	e, err1 := strconv.ParseUint(es, 10, 64)
	t, err2 := strconv.ParseInt(ms, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return CommitTime{}, fmt.Errorf("control: %s holds %q, not an epoch and a time", key, v)
	}
	return CommitTime{Epoch: cluster.Epoch(e), At: time.UnixMilli(t)}, nil
}
