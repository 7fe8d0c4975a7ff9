package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

func TestDemoChange(t *testing.T) {
	before := [][3]string{{"1", "350", "2"}, {"2", "75", "1"}}
	after := [][3]string{{"1", "350", "2"}, {"2", "200", "2"}, {"3", "60", "1"}}
	want := "- store_id=2 total_amount=75 orders=1\n" +
		"+ store_id=2 total_amount=200 orders=2\n" +
		"+ store_id=3 total_amount=60 orders=1\n"
	if got := demoChange(before, after); got != want {
		t.Errorf("demoChange = %q, want %q", got, want)
	}
	if got := demoChange(after, after); got != "(none)\n" {
		t.Errorf("demoChange of equal contents = %q, want (none)", got)
	}
}

// TestDemoDetectsWrongView checks that the demo fails, naming the step,
// when the view does not hold what a step expects.
func TestDemoDetectsWrongView(t *testing.T) {
	steps := slices.Clone(demoSteps)
	last := len(steps) - 1
	steps[last].want = [][3]string{{"1", "100", "1"}, {"2", "451", "3"}}
	var out bytes.Buffer
	err := runDemo(context.Background(), &out, steps)
	if err == nil {
		t.Fatalf("the demo accepted a wrong expectation:\n%s", out.String())
	}
	for _, want := range []string{"demo step 6", "total_amount=450", "total_amount=451"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("demo error %q does not mention %q", err, want)
		}
	}
}
