package control

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/cluster"
)

func TestAssignmentEncodingRoundTrips(t *testing.T) {
	a := cluster.Place(map[cluster.NodeID]cluster.LeaseID{"w1": 11, "w2": 22, "w3": 33})
	data, err := EncodeAssignment(&a)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"members":{"w1":11,"w2":22,"w3":33},"ranges":[{"owner":"w1","first":0,"last":85},{"owner":"w2","first":86,"last":170},{"owner":"w3","first":171,"last":255}]}`
	if string(data) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", data, want)
	}
	got, err := DecodeAssignment(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Owner != a.Owner || !cluster.SameMembers(got.Members, a.Members) {
		t.Fatalf("decoded [%s] %v, want [%s] %v", got, got.Members, &a, a.Members)
	}
}

func TestAssignmentDecodingRefusesAPartialPlacement(t *testing.T) {
	for _, c := range []struct{ data, err string }{
		{`{"members":{"w1":1},"ranges":[{"owner":"w1","first":0,"last":100}]}`, "buckets 101-255 have no owner"},
		{`{"members":{"w1":1},"ranges":[{"owner":"w1","first":1,"last":255}]}`, "does not continue at bucket 0"},
		{`{"members":{"w1":1},"ranges":[{"owner":"w2","first":0,"last":255}]}`, "owner w2 of buckets 0-255 is not a member"},
		{`{"members":{"w1":1},"ranges":[{"owner":"w1","first":0,"last":256}]}`, "does not continue"},
		{`[1]`, "decode assignment"},
	} {
		_, err := DecodeAssignment([]byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want one containing %q", c.data, err, c.err)
		}
	}
	var empty cluster.Assignment
	if _, err := EncodeAssignment(&empty); err == nil {
		t.Error("an assignment without owners encoded")
	}
}

func TestClusterNamesAreOneKeySegment(t *testing.T) {
	for _, bad := range []string{"", "a/b", "x\x00"} {
		if _, err := NewKeys(bad); err == nil {
			t.Errorf("cluster name %q accepted", bad)
		}
	}
	k, err := NewKeys("prod")
	if err != nil {
		t.Fatal(err)
	}
	if got := k.Member("w1"); got != "/rockstream/prod/members/w1" {
		t.Errorf("member key %s", got)
	}
}
