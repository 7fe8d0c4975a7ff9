package kafka

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/rockstream/rockstream/internal/connectors"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/zset"
)

// epochHeader is the header every sink record carries: the epoch of the
// change it describes, in decimal.
const epochHeader = "rockstream-epoch"

// maxEpochsPerTxn bounds the epochs one Kafka transaction covers, and so
// the changes a sink holds in memory at once.
const maxEpochsPerTxn = 256

// The sink reports what it has delivered to the engine, which keeps the
// view's change log from there on (runtime.Engine.SinkDelivered): when it
// starts, then after a transaction at most every reportInterval or
// reportEpochs epochs, since each report commits an epoch.
const (
	reportInterval = 5 * time.Second
	reportEpochs   = 1000
)

// sinkEncoder turns a view's changes into records.
type sinkEncoder struct {
	topic  string
	upsert bool
	cols   []runtime.Column
	// key are the key columns' indexes; nil when none is declared.
	key []int
}

func newSinkEncoder(topic, format string, cols []runtime.Column, keyNames []string) (*sinkEncoder, error) {
	enc := &sinkEncoder{topic: topic, upsert: format == "upsert", cols: cols}
	for _, n := range keyNames {
		found := false
		for i, c := range cols {
			if c.Name == n {
				enc.key = append(enc.key, i)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("key column %q is not a column of the view", n)
		}
	}
	return enc, nil
}

func (enc *sinkEncoder) record(epoch uint64, key, value []byte) *kgo.Record {
	return &kgo.Record{Topic: enc.topic, Key: key, Value: value,
		Headers: []kgo.RecordHeader{{Key: epochHeader, Value: strconv.AppendUint(nil, epoch, 10)}}}
}

func (enc *sinkEncoder) keyOf(row zset.Row) []byte {
	if enc.key == nil {
		return nil
	}
	return appendKey(nil, enc.cols, enc.key, row)
}

// debeziumValue is {"before":…,"after":…,"op":…,"epoch":n}.
func (enc *sinkEncoder) debeziumValue(before, after zset.Row, op string, epoch uint64) []byte {
	b := append([]byte(nil), `{"before":`...)
	b = appendRow(b, enc.cols, before)
	b = append(b, `,"after":`...)
	b = appendRow(b, enc.cols, after)
	b = append(b, `,"op":"`...)
	b = append(b, op...)
	b = append(b, `","epoch":`...)
	b = strconv.AppendUint(b, epoch, 10)
	return append(b, '}')
}

// snapshot returns the records of a view's contents at epoch.
func (enc *sinkEncoder) snapshot(rows zset.Batch, epoch uint64) []*kgo.Record {
	var out []*kgo.Record
	for _, e := range rows {
		for i := int64(0); i < e.Weight; i++ {
			value := appendRow(nil, enc.cols, e.Row)
			if !enc.upsert {
				value = enc.debeziumValue(nil, e.Row, "r", epoch)
			}
			out = append(out, enc.record(epoch, enc.keyOf(e.Row), value))
		}
	}
	return out
}

// epochRecords returns the records of one epoch's changes. With a key, a
// deletion and an insertion of the same key pair into an update (op u);
// in upsert format a key's insertion makes its deletion implicit and a
// deletion alone is a tombstone.
func (enc *sinkEncoder) epochRecords(out []*kgo.Record, epoch uint64, changes []runtime.Change) []*kgo.Record {
	type keyed struct {
		key        []byte
		dels, inss []zset.Row
	}
	var order []*keyed
	byKey := map[string]*keyed{}
	for _, c := range changes {
		k := enc.keyOf(c.Row)
		g := byKey[string(k)]
		if g == nil || enc.key == nil {
			g = &keyed{key: k}
			if enc.key != nil {
				byKey[string(k)] = g
			}
			order = append(order, g)
		}
		for w := c.Weight; w < 0; w++ {
			g.dels = append(g.dels, c.Row)
		}
		for w := c.Weight; w > 0; w-- {
			g.inss = append(g.inss, c.Row)
		}
	}
	// Deletions first, as in SUBSCRIBE, so that a consumer folding by key
	// never sees a key twice.
	sort.SliceStable(order, func(i, j int) bool { return len(order[i].inss) == 0 && len(order[j].inss) > 0 })
	for _, g := range order {
		if enc.upsert {
			if len(g.inss) == 0 {
				out = append(out, enc.record(epoch, g.key, nil))
			}
			for _, r := range g.inss {
				out = append(out, enc.record(epoch, g.key, appendRow(nil, enc.cols, r)))
			}
			continue
		}
		n := 0
		if enc.key != nil {
			n = min(len(g.dels), len(g.inss))
		}
		for i := 0; i < n; i++ {
			out = append(out, enc.record(epoch, g.key, enc.debeziumValue(g.dels[i], g.inss[i], "u", epoch)))
		}
		for _, r := range g.dels[n:] {
			out = append(out, enc.record(epoch, g.key, enc.debeziumValue(r, nil, "d", epoch)))
		}
		for _, r := range g.inss[n:] {
			out = append(out, enc.record(epoch, g.key, enc.debeziumValue(nil, r, "c", epoch)))
		}
	}
	return out
}

func runSink(ctx context.Context, env *connectors.Env) error {
	s := env.Spec
	topic := s.OptionDefault("topic", "")
	cols, err := env.Engine.ViewColumns(s.Target)
	if err != nil {
		return err
	}
	enc, err := newSinkEncoder(topic, s.OptionDefault("format", "debezium"), cols, keyColumns(s))
	if err != nil {
		return err
	}
	base, err := clientOptions(s)
	if err != nil {
		return err
	}
	txid := s.OptionDefault("transactional_id", "rockstream-sink-"+s.Name)
	cl, err := kgo.NewClient(append(base,
		kgo.TransactionalID(txid),
		kgo.TransactionTimeout(time.Minute),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
	)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	// Loading the producer id fences every earlier producer of this
	// transactional id and aborts its open transaction, so what is
	// committed now stays what is committed.
	if _, _, err := cl.ProducerID(ctx); err != nil {
		return fmt.Errorf("initializing the transactional producer %s: %w", txid, err)
	}
	ts, err := sinkTopicSettings(s)
	if err != nil {
		return err
	}
	created, err := ensureTopic(ctx, cl, topic, ts)
	if err != nil {
		return err
	}
	var after uint64
	var found bool
	if !created {
		if after, found, err = lastDeliveredEpoch(ctx, cl, topic); err != nil {
			return err
		}
	}
	if !found {
		snapshot, _ := s.Bool("snapshot", true)
		if snapshot {
			rows, epoch, err := env.Engine.ViewSnapshot(s.Target)
			if err != nil {
				return err
			}
			if err := produceTxn(ctx, cl, enc.snapshot(rows, epoch)); err != nil {
				return err
			}
			env.Status.Report(int64(len(rows)), 0, nil)
			after = epoch
		} else {
			after = s.Created
		}
	}
	env.Status.Running()
	var recs []*kgo.Record
	var reported uint64
	var reportedAt time.Time
	report := func(delivered uint64) error {
		if !reportedAt.IsZero() && delivered-reported < reportEpochs && time.Since(reportedAt) < reportInterval {
			return nil
		}
		reported, reportedAt = delivered, time.Now()
		return env.Engine.SinkDelivered(ctx, s.Name, delivered)
	}
	if err := report(after); err != nil {
		return err
	}
	for {
		frontier, wait := env.Engine.CommitWait()
		if after >= frontier {
			env.Status.SetLag(0)
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil
			}
		}
		env.Status.SetLag(int64(frontier - after))
		changes, upTo, err := env.Engine.ChangesBetween(s.Target, after, min(frontier, after+maxEpochsPerTxn))
		if err != nil {
			return err
		}
		recs = recs[:0]
		for i := 0; i < len(changes); {
			j := i
			for j < len(changes) && changes[j].Epoch == changes[i].Epoch {
				j++
			}
			recs = enc.epochRecords(recs, changes[i].Epoch, changes[i:j])
			i = j
		}
		if len(recs) > 0 {
			if err := produceTxn(ctx, cl, recs); err != nil {
				return err
			}
			env.Status.Report(int64(len(recs)), 0, nil)
			if err := report(upTo); err != nil {
				return err
			}
		}
		after = upTo
	}
}

// produceTxn writes records in one transaction and commits it.
func produceTxn(ctx context.Context, cl *kgo.Client, recs []*kgo.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	done := make(chan error, len(recs))
	for _, r := range recs {
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) { done <- err })
	}
	// Flush before ending the transaction: EndTransaction does not wait for
	// buffered records, and committing without them commits nothing.
	perr := cl.Flush(ctx)
	for range recs {
		if err := <-done; err != nil && perr == nil {
			perr = err
		}
	}
	if perr != nil {
		_ = cl.EndTransaction(context.WithoutCancel(ctx), kgo.TryAbort)
		return fmt.Errorf("producing to Kafka: %w", perr)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("committing the Kafka transaction: %w", err)
	}
	return nil
}

// lastDeliveredEpoch returns the highest epoch header among the committed
// records of topic. Each partition is read backwards from its last stable
// offset in growing windows until a committed record is found; aborted
// records and transaction markers are skipped.
func lastDeliveredEpoch(ctx context.Context, cl *kgo.Client, topic string) (uint64, bool, error) {
	adm := kadm.NewClient(cl)
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return 0, false, fmt.Errorf("listing the offsets of topic %s: %w", topic, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return 0, false, fmt.Errorf("listing the offsets of topic %s: %w", topic, err)
	}
	var best uint64
	var found bool
	var ferr error
	ends.Each(func(o kadm.ListedOffset) {
		if ferr != nil {
			return
		}
		start, _ := starts.Lookup(topic, o.Partition)
		for w := int64(64); ; w *= 4 {
			from := max(start.Offset, o.Offset-w)
			e, ok, err := scanEpochs(ctx, cl, topic, o.Partition, from, o.Offset)
			if err != nil {
				ferr = err
				return
			}
			if ok {
				if !found || e > best {
					best = e
				}
				found = true
				return
			}
			if from <= start.Offset {
				return
			}
		}
	})
	return best, found, ferr
}

// scanEpochs reads the committed records of a partition in [from, end)
// and returns the highest epoch header among them.
func scanEpochs(ctx context.Context, cl *kgo.Client, topic string, partition int32, from, end int64) (uint64, bool, error) {
	var best uint64
	var found bool
	for off := from; off < end; {
		// The metadata request also tells the client where the leader
		// is, so that the fetch below can go to it.
		md, err := kadm.NewClient(cl).Metadata(ctx, topic)
		if err != nil {
			return 0, false, fmt.Errorf("reading back %s partition %d: %w", topic, partition, err)
		}
		pd, ok := md.Topics[topic].Partitions[partition]
		if !ok || pd.Err != nil {
			return 0, false, fmt.Errorf("reading back %s partition %d: the partition has no leader", topic, partition)
		}
		leader := pd.Leader
		req := kmsg.NewPtrFetchRequest()
		req.IsolationLevel = 1
		req.MaxBytes = 4 << 20
		req.MaxWaitMillis = 0
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic                 // up to version 12
		rt.TopicID = md.Topics[topic].ID // from version 13
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = partition
		rp.FetchOffset = off
		rp.PartitionMaxBytes = 4 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl.Broker(int(leader)))
		if err != nil {
			return 0, false, fmt.Errorf("reading back %s partition %d: %w", topic, partition, err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return 0, false, fmt.Errorf("reading back %s partition %d: unexpected fetch response", topic, partition)
		}
		fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
			Offset: off, IsolationLevel: kgo.ReadCommitted(), Topic: topic, Partition: partition,
		}, &resp.Topics[0].Partitions[0], kgo.DefaultDecompressor(), nil)
		if fp.Err != nil {
			return 0, false, fmt.Errorf("reading back %s partition %d: %w", topic, partition, fp.Err)
		}
		for _, r := range fp.Records {
			if r.Offset >= end {
				break
			}
			for _, h := range r.Headers {
				if h.Key != epochHeader {
					continue
				}
				e, err := strconv.ParseUint(string(h.Value), 10, 64)
				if err != nil {
					return 0, false, fmt.Errorf("record %d of %s partition %d has a bad %s header %q", r.Offset, topic, partition, epochHeader, h.Value)
				}
				if !found || e > best {
					best = e
				}
				found = true
			}
		}
		if next <= off {
			break
		}
		off = next
	}
	return best, found, nil
}
