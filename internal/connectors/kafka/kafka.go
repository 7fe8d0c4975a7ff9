// Package kafka is the Kafka source and sink (docs/connectors.md).
//
// The source reads a topic's partitions directly (no consumer group) from
// the offsets it committed itself: each batch of records is applied in one
// epoch together with every partition's next offset
// (runtime.Engine.Ingest), so after any crash it resumes exactly after the
// last record applied. Consumer-group offsets are never used.
//
// The sink writes a materialized view's change log to a topic in Kafka
// transactions, each covering a range of epochs, every record carrying its
// epoch in a header. On start it fences earlier producers of its stable
// transactional id and reads the highest epoch committed to the topic
// (read_committed), then resumes after it: a read_committed consumer sees
// every change exactly once.
package kafka

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/rockstream/rockstream/internal/connectors"
	"github.com/rockstream/rockstream/internal/connectors/spec"
)

func init() {
	connectors.Register(connectors.Kind{
		Kind:      spec.Kind{Name: "kafka", Secrets: []string{"sasl_password"}, Validate: validate},
		RunSource: runSource,
		RunSink:   runSink,
	})
}

var (
	commonOptions = []string{"brokers", "topic", "format", "sasl_mechanism", "sasl_username", "sasl_password", "tls", "client_id"}
	sourceOptions = append([]string{"start", "error_table", "max_batch", "metadata_refresh"}, commonOptions...)
	sinkOptions   = append([]string{"key", "snapshot", "transactional_id", "partitions", "replication_factor"}, commonOptions...)
)

func validate(s *spec.Spec) error {
	allowed := sourceOptions
	formats := []string{"json", "csv", "debezium"}
	if s.Sink {
		allowed = sinkOptions
		formats = []string{"debezium", "upsert"}
	}
	if err := s.CheckOptions(allowed, []string{"brokers", "topic"}); err != nil {
		return err
	}
	format := s.OptionDefault("format", formats[0])
	ok := false
	for _, f := range formats {
		ok = ok || f == format
	}
	if !ok {
		return fmt.Errorf("kafka %s: format %q is not one of %s", s.What(), format, strings.Join(formats, ", "))
	}
	if start := s.OptionDefault("start", "earliest"); start != "earliest" && start != "latest" {
		return fmt.Errorf("kafka source: start must be earliest or latest, not %q", start)
	}
	if s.Sink {
		if format == "upsert" && keyColumns(s) == nil {
			return fmt.Errorf("kafka sink: format upsert needs the key option (the view's key columns)")
		}
		if _, err := s.Bool("snapshot", true); err != nil {
			return err
		}
		if _, err := sinkTopicSettings(s); err != nil {
			return err
		}
	} else if s.Target == "" {
		return fmt.Errorf("kafka source: name the table it writes into with INTO table")
	}
	if m := s.OptionDefault("sasl_mechanism", "plain"); m != "plain" && m != "scram-sha-256" && m != "scram-sha-512" {
		return fmt.Errorf("kafka %s: sasl_mechanism must be plain, scram-sha-256 or scram-sha-512", s.What())
	}
	if _, ok := s.Option("sasl_username"); ok != hasOption(s, "sasl_password") {
		return fmt.Errorf("kafka %s: sasl_username and sasl_password go together", s.What())
	}
	if _, err := s.Bool("tls", false); err != nil {
		return err
	}
	if n, err := s.Int("max_batch", 10000); err != nil {
		return err
	} else if n < 1 {
		return fmt.Errorf("kafka source: max_batch must be at least 1, not %d", n)
	}
	if _, err := time.ParseDuration(s.OptionDefault("metadata_refresh", "5s")); err != nil {
		return fmt.Errorf("kafka source: metadata_refresh: %v", err)
	}
	return nil
}

func hasOption(s *spec.Spec, key string) bool {
	_, ok := s.Option(key)
	return ok
}

// keyColumns returns the sink's declared key columns, or nil.
func keyColumns(s *spec.Spec) []string {
	v, ok := s.Option("key")
	if !ok {
		return nil
	}
	var out []string
	for _, c := range strings.Split(v, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// clientOptions are the options every client of a definition shares.
func clientOptions(s *spec.Spec) ([]kgo.Opt, error) {
	var brokers []string
	for _, b := range strings.Split(s.OptionDefault("brokers", ""), ",") {
		if b = strings.TrimSpace(b); b != "" {
			brokers = append(brokers, b)
		}
	}
	opts := []kgo.Opt{kgo.SeedBrokers(brokers...), kgo.ClientID(s.OptionDefault("client_id", "rockstream"))}
	if user, ok := s.Option("sasl_username"); ok {
		pass := s.OptionDefault("sasl_password", "")
		switch s.OptionDefault("sasl_mechanism", "plain") {
		case "plain":
			opts = append(opts, kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()))
		case "scram-sha-256":
			opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()))
		case "scram-sha-512":
			opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()))
		}
	}
	if on, _ := s.Bool("tls", false); on {
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}))
	}
	return opts, nil
}

// progress is a source's durable position: the next offset to read of
// every partition it has seen.
type progress struct {
	Topic string `json:"topic"`
	// Next maps a partition to the offset of its next record.
	Next map[int32]int64 `json:"next"`
}

func (p *progress) encode() []byte {
	b, _ := json.Marshal(p)
	return b
}

func decodeProgress(b []byte) (*progress, error) {
	p := &progress{Next: map[int32]int64{}}
	if b == nil {
		return p, nil
	}
	if err := json.Unmarshal(b, p); err != nil {
		return nil, fmt.Errorf("the source's committed offsets do not decode: %v", err)
	}
	if p.Next == nil {
		p.Next = map[int32]int64{}
	}
	return p, nil
}

func (p *progress) clone() *progress {
	n := &progress{Topic: p.Topic, Next: make(map[int32]int64, len(p.Next))}
	for k, v := range p.Next {
		n.Next[k] = v
	}
	return n
}

func (p *progress) partitions() []int32 {
	var out []int32
	for k := range p.Next {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
