package types

import "testing"

// TestTimeBinaryRoundTrip: time_send's format, int64 microseconds since
// midnight, reads back as the value, and time(p) rounds on input.
func TestTimeBinaryRoundTrip(t *testing.T) {
	for _, s := range []string{"00:00", "10:30:15.123456", "24:00:00", "23:59:59.999999"} {
		v, err := Parse(Of(Time), s)
		if err != nil {
			t.Fatal(err)
		}
		b, err := AppendBinary(nil, v, Of(Time))
		if err != nil || len(b) != 8 {
			t.Fatalf("%s: %x, %v", s, b, err)
		}
		back, err := ParseBinary(b, Of(Time))
		if err != nil || Compare(back, v) != 0 {
			t.Fatalf("%s: read back %v, %v", s, back, err)
		}
	}
	p := Of(Time)
	p.Precision = 1
	v, err := ParseBinary([]byte{0, 0, 0, 0, 0, 0x0f, 0x42, 0x9f}, p) // 999,583 µs
	if err != nil || Format(v, p) != "00:00:01" {
		t.Fatalf("time(1) of 00:00:00.999583: %v, %v", v, err)
	}
	if _, err := ParseBinary([]byte{0, 0, 0, 0x14, 0x1d, 0xd7, 0x60, 0x01}, Of(Time)); err == nil {
		t.Fatal("a time past 24:00:00 was accepted")
	}
}
