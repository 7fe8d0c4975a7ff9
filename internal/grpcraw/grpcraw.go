// Package grpcraw is a gRPC codec whose messages are their own bytes: the
// services of packages exchange and control frame and check their
// messages themselves, so gRPC carries them as they are.
package grpcraw

import "fmt"

// Message is one gRPC message's bytes.
type Message struct{ B []byte }

// Codec is the codec of Messages. Both ends force it (grpc.ForceCodec,
// grpc.ForceServerCodec).
type Codec struct{}

func (Codec) Name() string { return "rockstream-raw" }

func (Codec) Marshal(v any) ([]byte, error) {
	m, ok := v.(*Message)
	if !ok {
		return nil, fmt.Errorf("grpcraw: cannot marshal %T", v)
	}
	return m.B, nil
}

// Unmarshal copies data: gRPC reuses the buffer once it returns.
func (Codec) Unmarshal(data []byte, v any) error {
	m, ok := v.(*Message)
	if !ok {
		return fmt.Errorf("grpcraw: cannot unmarshal into %T", v)
	}
	m.B = append(m.B[:0], data...)
	return nil
}
