package cluster

import (
	"fmt"
	"strings"
)

// MsgKind is the kind of a message between nodes.
type MsgKind uint8

const (
	// MsgWrite carries one DML write from the client to the coordinator.
	MsgWrite MsgKind = iota + 1
	// MsgAck tells the client that the writes in WriteIDs are committed.
	MsgAck
	// MsgReset tells a worker to serve Assignment at Rev: reset its state
	// to checkpoint Checkpoint and replay the input log up to Committed.
	MsgReset
	// MsgReady reports that a worker has finished a reset at Rev and has
	// applied Epoch.
	MsgReady
	// MsgPrepare asks a worker to run epoch Epoch and keep its batch as a
	// prepared record.
	MsgPrepare
	// MsgPrepared reports a durable prepared record for Epoch.
	MsgPrepared
	// MsgApply announces the commit frontier Committed; workers apply
	// their prepared batch up to it.
	MsgApply
	// MsgCheckpoint asks a worker to upload its state at epoch Epoch.
	MsgCheckpoint
	// MsgCheckpointDone reports the object key of the upload in Key.
	MsgCheckpointDone
)

var msgNames = map[MsgKind]string{
	MsgWrite: "write", MsgAck: "ack", MsgReset: "reset", MsgReady: "ready",
	MsgPrepare: "prepare", MsgPrepared: "prepared", MsgApply: "apply",
	MsgCheckpoint: "checkpoint", MsgCheckpointDone: "checkpoint-done",
}

func (k MsgKind) String() string { return msgNames[k] }

// Message is one message of the protocol. Every message between the
// coordinator and a worker carries the assignment revision it was sent
// under and the commit frontier the sender knows of.
type Message struct {
	Kind       MsgKind
	From, To   NodeID
	Rev        Revision
	Epoch      Epoch
	Committed  Epoch
	Checkpoint Epoch
	Assignment *Assignment
	Write      Write
	WriteIDs   []uint64
	Key        string
}

func (m Message) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s->%s", m.Kind, m.From, m.To)
	switch m.Kind {
	case MsgWrite:
		fmt.Fprintf(&b, " id=%d %s%+d", m.Write.ID, m.Write.Key, m.Write.Delta)
		return b.String()
	case MsgAck:
		fmt.Fprintf(&b, " ids=%v", m.WriteIDs)
		return b.String()
	}
	fmt.Fprintf(&b, " rev=%d", m.Rev)
	switch m.Kind {
	case MsgReset:
		fmt.Fprintf(&b, " checkpoint=%d committed=%d [%s]", m.Checkpoint, m.Committed, m.Assignment)
	case MsgReady, MsgPrepare, MsgPrepared, MsgCheckpoint:
		fmt.Fprintf(&b, " e=%d committed=%d", m.Epoch, m.Committed)
	case MsgApply:
		fmt.Fprintf(&b, " committed=%d", m.Committed)
	case MsgCheckpointDone:
		fmt.Fprintf(&b, " e=%d key=%s", m.Epoch, m.Key)
	}
	return b.String()
}

// ActionKind is the kind of an action a state machine asks its host to
// perform: a message to send, an etcd request, an object store request or
// a write to the node's local disk.
type ActionKind uint8

const (
	// ActSend sends Msg over the network.
	ActSend ActionKind = iota + 1
	// ActReadCluster reads membership, assignment (with its revision),
	// committed epoch and checkpoint pointer from etcd.
	ActReadCluster
	// ActWriteAssignment writes Assignment if the assignment's revision is
	// still Rev (a conditional transaction).
	ActWriteAssignment
	// ActCommit writes committed = Epoch if the assignment's revision is
	// still Rev and committed is Epoch-1: the commit point.
	ActCommit
	// ActRecordCheckpoint points etcd at the checkpoint of Epoch if the
	// assignment's revision is still Rev.
	ActRecordCheckpoint
	// ActRegister grants a lease and puts the worker's membership key
	// bound to it.
	ActRegister
	// ActKeepAlive renews Lease; SentAt is the worker's time of sending.
	ActKeepAlive
	// ActAppendInput stores Writes as the input log entry of Epoch unless
	// one is there already (never overwritten).
	ActAppendInput
	// ActReadInput reads the input log entry of Epoch.
	ActReadInput
	// ActPutObject stores Data under Key.
	ActPutObject
	// ActGetObject reads the object under Key.
	ActGetObject
	// ActDiskPrepare durably keeps Delta as the prepared record of Epoch.
	ActDiskPrepare
	// ActDiskApply adds Delta to the local state and sets its epoch.
	ActDiskApply
	// ActDiskReset replaces the local state with State at Epoch and drops
	// any prepared record.
	ActDiskReset
)

var actNames = map[ActionKind]string{
	ActSend: "send", ActReadCluster: "etcd read-cluster",
	ActWriteAssignment: "etcd write-assignment", ActCommit: "etcd commit",
	ActRecordCheckpoint: "etcd record-checkpoint", ActRegister: "etcd register",
	ActKeepAlive: "etcd keepalive", ActAppendInput: "log append",
	ActReadInput: "log read", ActPutObject: "object put", ActGetObject: "object get",
	ActDiskPrepare: "disk prepare", ActDiskApply: "disk apply", ActDiskReset: "disk reset",
}

func (k ActionKind) String() string { return actNames[k] }

// Action is one thing a state machine asks its host to do. Results come
// back as events; the host may lose them only by crashing the node.
type Action struct {
	Kind       ActionKind
	Msg        Message
	Rev        Revision
	Epoch      Epoch
	Assignment *Assignment
	Lease      LeaseID
	SentAt     int64
	Writes     []Write
	Key        string
	Data       []byte
	Delta      Batch
	State      Batch
}

func (a Action) String() string {
	switch a.Kind {
	case ActSend:
		return "send " + a.Msg.String()
	case ActWriteAssignment:
		return fmt.Sprintf("%s if rev=%d [%s]", a.Kind, a.Rev, a.Assignment)
	case ActCommit:
		return fmt.Sprintf("%s e=%d if rev=%d", a.Kind, a.Epoch, a.Rev)
	case ActRecordCheckpoint:
		return fmt.Sprintf("%s e=%d if rev=%d", a.Kind, a.Epoch, a.Rev)
	case ActKeepAlive:
		return fmt.Sprintf("%s lease=%d", a.Kind, a.Lease)
	case ActAppendInput:
		return fmt.Sprintf("%s e=%d writes=%d", a.Kind, a.Epoch, len(a.Writes))
	case ActReadInput:
		return fmt.Sprintf("%s e=%d", a.Kind, a.Epoch)
	case ActPutObject, ActGetObject:
		return fmt.Sprintf("%s %s", a.Kind, a.Key)
	case ActDiskPrepare, ActDiskApply:
		return fmt.Sprintf("%s e=%d keys=%d", a.Kind, a.Epoch, len(a.Delta))
	case ActDiskReset:
		return fmt.Sprintf("%s e=%d keys=%d", a.Kind, a.Epoch, len(a.State))
	}
	return a.Kind.String()
}

// EventKind is the kind of an event fed into a state machine.
type EventKind uint8

const (
	// EvTick passes the host's time Now (in ticks) to the machine.
	EvTick EventKind = iota + 1
	// EvRecv delivers Msg.
	EvRecv
	// EvClusterRead is the result of ActReadCluster.
	EvClusterRead
	// EvAssignmentWritten is the result of ActWriteAssignment; Rev is the
	// new revision when OK.
	EvAssignmentWritten
	// EvCommitted is the result of ActCommit.
	EvCommitted
	// EvCheckpointRecorded is the result of ActRecordCheckpoint.
	EvCheckpointRecorded
	// EvRegistered is the result of ActRegister, with the granted Lease.
	EvRegistered
	// EvRenewed is the result of ActKeepAlive; OK false with no Err means
	// the lease is gone.
	EvRenewed
	// EvInputAppended is the result of ActAppendInput; Writes is what the
	// log holds for Epoch, which differs from the request when an earlier
	// attempt had sealed that epoch already.
	EvInputAppended
	// EvInputRead is the result of ActReadInput.
	EvInputRead
	// EvObjectPut is the result of ActPutObject.
	EvObjectPut
	// EvObjectGot is the result of ActGetObject.
	EvObjectGot
)

// Event is one input to a state machine. Err set means the request failed
// and its outcome is unknown (it may have taken effect).
type Event struct {
	Kind       EventKind
	Now        int64
	Msg        Message
	OK         bool
	Err        error
	Rev        Revision
	Epoch      Epoch
	Members    map[NodeID]LeaseID
	Assignment *Assignment
	Committed  Epoch
	Checkpoint Epoch
	Lease      LeaseID
	SentAt     int64
	Writes     []Write
	Key        string
	Data       []byte
	// Tag is echoed from the request by the host: the revision a worker
	// issued a storage read under, so late results of an abandoned reset
	// are recognised.
	Tag Revision
}
