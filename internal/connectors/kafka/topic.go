package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rockstream/rockstream/internal/connectors/spec"
)

// topicSettings are the partition count and replication factor a sink
// creates its topic with; -1 leaves the choice to the broker's defaults
// (num.partitions, default.replication.factor).
type topicSettings struct {
	partitions        int32
	replicationFactor int16
}

// sinkTopicSettings reads the sink's partitions and replication_factor
// options.
func sinkTopicSettings(s *spec.Spec) (topicSettings, error) {
	p, err := s.Int("partitions", -1)
	if err != nil {
		return topicSettings{}, err
	}
	rf, err := s.Int("replication_factor", -1)
	if err != nil {
		return topicSettings{}, err
	}
	if _, ok := s.Option("partitions"); ok && (p < 1 || p > 1<<20) {
		return topicSettings{}, fmt.Errorf("kafka sink: partitions must be between 1 and %d, not %d", 1<<20, p)
	}
	if _, ok := s.Option("replication_factor"); ok && (rf < 1 || rf > 1<<15-1) {
		return topicSettings{}, fmt.Errorf("kafka sink: replication_factor must be between 1 and %d, not %d", 1<<15-1, rf)
	}
	return topicSettings{partitions: int32(p), replicationFactor: int16(rf)}, nil
}

// ensureTopic creates topic when the cluster does not have it and reports
// whether it did: a topic just created holds nothing to read back. A topic
// that exists is used as it is, whatever its settings.
func ensureTopic(ctx context.Context, cl *kgo.Client, topic string, ts topicSettings) (bool, error) {
	adm := kadm.NewClient(cl)
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return false, fmt.Errorf("looking up topic %s: %w", topic, err)
	}
	td, ok := md.Topics[topic]
	switch {
	case ok && td.Err == nil:
		return false, nil
	case ok && !errors.Is(td.Err, kerr.UnknownTopicOrPartition):
		return false, fmt.Errorf("looking up topic %s: %w", topic, td.Err)
	}
	resp, err := adm.CreateTopic(ctx, ts.partitions, ts.replicationFactor, nil, topic)
	switch {
	case errors.Is(err, kerr.TopicAlreadyExists):
		// Created by someone else since the lookup.
		return false, nil
	case err != nil:
		msg := err.Error()
		if resp.ErrMessage != "" {
			msg += ": " + resp.ErrMessage
		}
		return false, fmt.Errorf("the broker refused to create topic %s (%s): %s", topic, ts, msg)
	}
	return true, nil
}

func (ts topicSettings) String() string {
	part := "the broker's default partition count"
	if ts.partitions > 0 {
		part = fmt.Sprintf("%d partitions", ts.partitions)
	}
	rf := "the broker's default replication factor"
	if ts.replicationFactor > 0 {
		rf = fmt.Sprintf("replication factor %d", ts.replicationFactor)
	}
	return part + ", " + rf
}
