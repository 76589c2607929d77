package caddymodule

import (
	"fmt"
	"testing"
	"time"
)

// TestOpsFeedBounded: the ring keeps the newest opsRingSize events, newest
// first; a minute holds at most opsSeriesPerMinute series, more add up
// under "(other)"; minutes older than the hour are dropped; an attempt a
// fallback moved on from is an event but not a request.
func TestOpsFeedBounded(t *testing.T) {
	f := &opsFeedState{}
	t0 := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	for i := range opsRingSize + 50 {
		f.add(t0, &opsEvent{Reason: fmt.Sprint(i)}, opsSeriesKey{Client: "c", Model: "m", Backend: "b"}, 1, 1, true)
	}
	events, points := f.snapshot(t0)
	if len(events) != opsRingSize || events[0].Reason != fmt.Sprint(opsRingSize+49) || events[len(events)-1].Reason != "50" {
		t.Fatalf("ring: %d events, newest %q, oldest %q", len(events), events[0].Reason, events[len(events)-1].Reason)
	}
	if len(points) != 1 || points[0].Requests != opsRingSize+50 || points[0].Errors != opsRingSize+50 {
		t.Fatalf("points %+v", points)
	}

	f = &opsFeedState{}
	for i := range opsSeriesPerMinute + 30 {
		f.add(t0, nil, opsSeriesKey{Client: fmt.Sprint(i)}, 0, 0, true)
	}
	f.add(t0, &opsEvent{}, opsSeriesKey{Client: "x"}, 0, 0, false) // fell back: not a request
	_, points = f.snapshot(t0)
	other := 0
	for _, p := range points {
		if p.Client == "(other)" {
			other = int(p.Requests)
		}
	}
	if len(points) != opsSeriesPerMinute+1 || other != 30 {
		t.Fatalf("%d series, (other) %d; want %d and 30", len(points), other, opsSeriesPerMinute+1)
	}

	for m := 1; m <= opsMinutes+5; m++ {
		f.add(t0.Add(time.Duration(m)*time.Minute), nil, opsSeriesKey{}, 0, 0, true)
	}
	if len(f.minutes) > opsMinutes {
		t.Errorf("%d minutes kept, want at most %d", len(f.minutes), opsMinutes)
	}
	_, points = f.snapshot(t0.Add((opsMinutes + 5) * time.Minute))
	if len(points) != opsMinutes {
		t.Errorf("%d points in the last hour, want %d", len(points), opsMinutes)
	}
}
