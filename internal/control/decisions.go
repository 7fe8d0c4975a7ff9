package control

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/internal/cluster"
)

// Decision is one decision of the coordinator, for the audit log: what it
// decided and the reading of the cluster that made it decide so.
type Decision struct {
	// Kind is what was decided: "elected" (a term began), "placement" (the
	// buckets placed on the members read), "assignment" (the placement
	// written; its revision fences every older one), "commit" (an epoch
	// committed, logged sparsely), "checkpoint" (a barrier checkpoint
	// recorded).
	Kind     string
	Revision cluster.Revision
	Epoch    cluster.Epoch
	// OK is false when etcd refused the write or its outcome is unknown.
	OK bool
	// Detail says what was decided; Reading what it was decided from.
	Detail  string
	Reading string
}

// decisions turns what a coordinator machine asks for and the results it
// is fed into Decisions. It only watches: it keeps the latest reading of
// etcd and the assignment and checkpoint in progress to name them.
type decisions struct {
	every     cluster.Epoch // commits are logged when divisible by it
	read      *cluster.Event
	proposed  *cluster.Assignment
	placement string // the reading the proposal was made from
	rev       cluster.Revision
	members   []cluster.NodeID
	committed bool // a commit was logged under rev
	parts     string
}

func newDecisions(commitEvery cluster.Epoch) *decisions {
	if commitEvery == 0 {
		commitEvery = 100
	}
	return &decisions{every: commitEvery}
}

// action watches an action before it is performed.
func (d *decisions) action(a cluster.Action) []Decision {
	switch a.Kind {
	case cluster.ActWriteAssignment:
		d.proposed, d.placement = a.Assignment, d.reading()
		return []Decision{{Kind: "placement", Revision: a.Rev, OK: true,
			Detail:  fmt.Sprintf("place the %d buckets on %d members: %s, if the assignment is still at revision %d", cluster.NumBuckets, len(a.Assignment.Members), a.Assignment, a.Rev),
			Reading: d.placement}}
	case cluster.ActPutObject:
		var keys []string
		if json.Unmarshal(a.Data, &keys) == nil {
			d.parts = strings.Join(keys, ", ")
		}
	}
	return nil
}

// event watches a result or message before the machine is fed it.
func (d *decisions) event(ev cluster.Event) []Decision {
	switch ev.Kind {
	case cluster.EvClusterRead:
		if ev.Err == nil {
			r := ev
			d.read = &r
			if d.rev == 0 || d.rev != ev.Rev {
				d.adopt(ev.Rev, ev.Assignment)
			}
		}
	case cluster.EvAssignmentWritten:
		if d.proposed == nil {
			return nil
		}
		dec := Decision{Kind: "assignment", Revision: ev.Rev, OK: ev.OK && ev.Err == nil, Reading: d.placement}
		switch {
		case dec.OK:
			old := d.rev
			d.adopt(ev.Rev, d.proposed)
			dec.Detail = fmt.Sprintf("assignment written at revision %d: %s; messages of revision %d and older are refused from now on, and every member resets to the last checkpoint", ev.Rev, d.proposed, old)
		case ev.Err != nil:
			dec.Detail = fmt.Sprintf("writing the assignment has an unknown outcome (%v); reading etcd again", ev.Err)
		default:
			dec.Detail = "writing the assignment was refused: its revision or the leadership moved; reading etcd again"
		}
		d.proposed = nil
		return []Decision{dec}
	case cluster.EvCommitted:
		ok := ev.OK && ev.Err == nil
		if ok && d.committed && ev.Epoch%d.every != 0 {
			return nil
		}
		dec := Decision{Kind: "commit", Revision: d.rev, Epoch: ev.Epoch, OK: ok,
			Reading: fmt.Sprintf("prepared(%d) reported under revision %d by every member: %s", ev.Epoch, d.rev, joinIDs(d.members))}
		switch {
		case ok:
			d.committed = true
			dec.Detail = fmt.Sprintf("committed = %d; the epoch's writes are acknowledged (commits are logged at the first of each assignment and every %d epochs)", ev.Epoch, d.every)
		case ev.Err != nil:
			dec.Detail = fmt.Sprintf("the commit of %d has an unknown outcome (%v); reading committed again", ev.Epoch, ev.Err)
		default:
			dec.Detail = fmt.Sprintf("the commit of %d was refused: the assignment's revision, the leadership or committed moved", ev.Epoch)
		}
		return []Decision{dec}
	case cluster.EvCheckpointRecorded:
		ok := ev.OK && ev.Err == nil
		dec := Decision{Kind: "checkpoint", Revision: d.rev, Epoch: ev.Epoch, OK: ok,
			Reading: fmt.Sprintf("the manifest %s lists the parts %s", cluster.ManifestKey(ev.Epoch), d.parts)}
		switch {
		case ok:
			dec.Detail = fmt.Sprintf("checkpoint = %d: a reset replays the input log from epoch %d", ev.Epoch, ev.Epoch+1)
		case ev.Err != nil:
			dec.Detail = fmt.Sprintf("recording checkpoint %d has an unknown outcome (%v); retried", ev.Epoch, ev.Err)
		default:
			dec.Detail = fmt.Sprintf("recording checkpoint %d was refused: the assignment's revision or the leadership moved", ev.Epoch)
		}
		return []Decision{dec}
	}
	return nil
}

func (d *decisions) adopt(rev cluster.Revision, a *cluster.Assignment) {
	d.rev, d.committed, d.members = rev, false, nil
	if a != nil {
		d.members = cluster.SortedIDs(a.Members)
	}
}

// reading describes the latest etcd reading.
func (d *decisions) reading() string {
	r := d.read
	if r == nil {
		return "no reading of etcd yet"
	}
	var ms []string
	for _, id := range cluster.SortedIDs(r.Members) {
		ms = append(ms, fmt.Sprintf("%s (lease %x)", id, r.Members[id]))
	}
	if len(ms) == 0 {
		ms = []string{"none"}
	}
	asg := "no assignment"
	if r.Assignment != nil {
		var old []string
		for _, id := range cluster.SortedIDs(r.Assignment.Members) {
			old = append(old, fmt.Sprintf("%s (lease %x)", id, r.Assignment.Members[id]))
		}
		asg = fmt.Sprintf("assignment at revision %d placed on %s", r.Rev, strings.Join(old, ", "))
	}
	return fmt.Sprintf("members registered in etcd: %s; %s; committed %d, checkpoint %d", strings.Join(ms, ", "), asg, r.Committed, r.Checkpoint)
}

func joinIDs(ids []cluster.NodeID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, ", ")
}
