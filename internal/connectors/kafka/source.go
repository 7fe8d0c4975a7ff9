package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rockstream/rockstream/internal/connectors"
	"github.com/rockstream/rockstream/internal/runtime"
)

// sourceBatch is what the reader hands the committer: the changes of a
// run of records and the next offset of each partition they came from.
type sourceBatch struct {
	changes []runtime.RowChange
	errors  []runtime.IngestError
	next    map[int32]int64
	records int64
	// lag is each partition's distance to its last stable offset after
	// this batch.
	lag map[int32]int64
}

// readAhead bounds the batches decoded but not yet committed: a slow
// commit (a costly view) stops the reader, and the Kafka client's fetch
// buffer is bounded by its FetchMaxBytes.
const readAhead = 2

func runSource(ctx context.Context, env *connectors.Env) error {
	s := env.Spec
	topic := s.OptionDefault("topic", "")
	maxBatch, _ := s.Int("max_batch", 10000)
	refresh, _ := time.ParseDuration(s.OptionDefault("metadata_refresh", "5s"))
	errorTable := s.OptionDefault("error_table", "")
	cols, pk, err := env.Engine.TableColumns(s.Target)
	if err != nil {
		return err
	}
	dec := newDecoder(s.OptionDefault("format", "json"), s.Target, cols, pk)
	raw, err := env.Engine.SourceProgress(s.Name)
	if err != nil {
		return err
	}
	prog, err := decodeProgress(raw)
	if err != nil {
		return err
	}
	prog.Topic = topic

	base, err := clientOptions(s)
	if err != nil {
		return err
	}
	admCl, err := kgo.NewClient(base...)
	if err != nil {
		return err
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)

	// On the first start the starting offsets are fixed and committed, so
	// that a restart before the first record does not move "latest".
	if len(prog.Next) == 0 {
		var offs kadm.ListedOffsets
		if s.OptionDefault("start", "earliest") == "latest" {
			offs, err = adm.ListEndOffsets(ctx, topic)
		} else {
			offs, err = adm.ListStartOffsets(ctx, topic)
		}
		if err == nil {
			err = offs.Error()
		}
		if err != nil {
			return fmt.Errorf("listing the partitions of topic %s: %w", topic, err)
		}
		offs.Each(func(o kadm.ListedOffset) { prog.Next[o.Partition] = o.Offset })
		if len(prog.Next) == 0 {
			return fmt.Errorf("topic %s does not exist or has no partitions", topic)
		}
		if _, err := env.Engine.Ingest(ctx, &runtime.Ingest{Source: s.Name, Progress: prog.encode()}); err != nil {
			return err
		}
	}

	start := map[int32]kgo.Offset{}
	for p, off := range prog.Next {
		start[p] = kgo.NewOffset().At(off)
	}
	cl, err := kgo.NewClient(append(base,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(1<<20),
		kgo.FetchMaxPartitionBytes(256<<10),
	)...)
	if err != nil {
		return err
	}
	defer cl.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan sourceBatch, readAhead)
	readErr := make(chan error, 2)
	go func() { readErr <- readRecords(ctx, cl, dec, maxBatch, batches) }()
	// The partitions are listed here: inside the goroutine the listing
	// would race with the loop below updating prog.
	known := prog.partitions()
	go func() { readErr <- watchPartitions(ctx, adm, cl, topic, known, refresh) }()

	lag := map[int32]int64{}
	env.Status.Running()
	for {
		var b sourceBatch
		select {
		case b = <-batches:
		case err := <-readErr:
			if ctx.Err() != nil {
				return nil
			}
			return err
		case <-ctx.Done():
			return nil
		}
		for p, n := range b.next {
			prog.Next[p] = n
		}
		res, err := env.Engine.Ingest(ctx, &runtime.Ingest{Source: s.Name, Changes: b.changes,
			Errors: b.errors, ErrorTable: errorTable, Progress: prog.encode()})
		if err != nil {
			return err
		}
		var last error
		if n := len(b.errors); n > 0 {
			last = errors.New(b.errors[n-1].Err)
		}
		if n := len(res.Rejected); n > 0 {
			last = errors.New(res.Rejected[n-1].Err)
		}
		env.Status.Report(b.records, int64(len(b.errors)+len(res.Rejected)), last)
		var total int64
		for p, l := range b.lag {
			lag[p] = l
		}
		for _, l := range lag {
			total += l
		}
		env.Status.SetLag(total)
	}
}

// readRecords polls records and decodes them into batches until ctx ends.
func readRecords(ctx context.Context, cl *kgo.Client, dec *decoder, maxBatch int, out chan<- sourceBatch) error {
	for {
		fs := cl.PollRecords(ctx, maxBatch)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ferr error
		fs.EachError(func(topic string, p int32, err error) {
			if ferr == nil && !errors.Is(err, context.Canceled) {
				ferr = fmt.Errorf("fetching %s partition %d: %w", topic, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		b := sourceBatch{next: map[int32]int64{}, lag: map[int32]int64{}}
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			for _, r := range p.Records {
				origin := runtime.Origin{Partition: r.Partition, Offset: r.Offset, Raw: r.Value}
				var err error
				b.changes, err = dec.decode(b.changes, r.Value, origin)
				if err != nil {
					b.errors = append(b.errors, runtime.IngestError{Origin: origin, Err: err.Error()})
				}
				b.next[r.Partition] = r.Offset + 1
				b.records++
			}
			if n, ok := b.next[p.Partition]; ok && p.LastStableOffset >= n {
				b.lag[p.Partition] = p.LastStableOffset - n
			}
		})
		if b.records == 0 {
			continue
		}
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// watchPartitions adds the partitions that appear on the topic to the
// consumer, from their first offset.
func watchPartitions(ctx context.Context, adm *kadm.Client, cl *kgo.Client, topic string, known []int32, every time.Duration) error {
	seen := map[int32]bool{}
	for _, p := range known {
		seen[p] = true
	}
	for {
		if err := sleep(ctx, every); err != nil {
			return err
		}
		offs, err := adm.ListStartOffsets(ctx, topic)
		if err != nil || offs.Error() != nil {
			// A transient metadata failure: the consumer reports real
			// trouble itself; try again at the next refresh.
			continue
		}
		add := map[int32]kgo.Offset{}
		offs.Each(func(o kadm.ListedOffset) {
			if !seen[o.Partition] {
				seen[o.Partition] = true
				add[o.Partition] = kgo.NewOffset().At(o.Offset)
			}
		})
		if len(add) > 0 {
			cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: add})
		}
	}
}
