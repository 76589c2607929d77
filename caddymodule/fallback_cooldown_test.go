package caddymodule

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestCooldownRetryAfter(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newCooldowns(clk.now)
	if _, cooling := c.cooling("a", "m"); cooling {
		t.Fatal("a fresh backend is cooling")
	}
	until := c.failed("a", "m", 7*time.Second)
	if want := clk.t.Add(7 * time.Second); !until.Equal(want) {
		t.Errorf("until = %v, want %v", until, want)
	}
	clk.advance(6 * time.Second)
	if _, cooling := c.cooling("a", "m"); !cooling {
		t.Error("a is not cooling within its Retry-After")
	}
	if _, cooling := c.cooling("b", "m"); cooling {
		t.Error("b cools with a")
	}
	clk.advance(time.Second)
	if _, cooling := c.cooling("a", "m"); cooling {
		t.Error("a is still cooling after its Retry-After")
	}
	// A huge Retry-After is capped.
	until = c.failed("a", "m", 24*time.Hour)
	if want := clk.t.Add(maxRetryAfter); !until.Equal(want) {
		t.Errorf("capped until = %v, want %v", until, want)
	}
}

func TestCooldownConsecutiveFailures(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newCooldowns(clk.now)
	for i := 1; i < failureThreshold; i++ {
		if until := c.failed("a", "m", 0); !until.IsZero() {
			t.Fatalf("failure %d started a cooldown until %v", i, until)
		}
	}
	// A success in between starts the count again.
	c.succeeded("a", "m")
	for i := 1; i < failureThreshold; i++ {
		c.failed("a", "m", 0)
	}
	if _, cooling := c.cooling("a", "m"); cooling {
		t.Fatal("cooling after a success and fewer failures than the threshold")
	}
	until := c.failed("a", "m", 0)
	if want := clk.t.Add(failureCooldown); !until.Equal(want) {
		t.Fatalf("until = %v, want %v", until, want)
	}
	clk.advance(failureCooldown - time.Millisecond)
	if _, cooling := c.cooling("a", "m"); !cooling {
		t.Error("not cooling before failureCooldown ends")
	}
	clk.advance(time.Millisecond)
	if _, cooling := c.cooling("a", "m"); cooling {
		t.Error("cooling after failureCooldown")
	}
	c.succeeded("a", "m")
	if len(c.m) != 0 {
		t.Errorf("a success left a record: %v", c.m)
	}
}

// TestCooldownPerModel: a cooldown is the pair's, backend and model (a
// 429 of one Azure deployment leaves the others of the backend alone).
func TestCooldownPerModel(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newCooldowns(clk.now)
	c.failed("azure", "dep-a", 7*time.Second)
	if _, cooling := c.cooling("azure", "dep-a"); !cooling {
		t.Error("dep-a is not cooling within its Retry-After")
	}
	if _, cooling := c.cooling("azure", "dep-b"); cooling {
		t.Error("dep-b cools with dep-a")
	}
	c.succeeded("azure", "dep-b")
	if _, cooling := c.cooling("azure", "dep-a"); !cooling {
		t.Error("dep-b's success cleared dep-a's cooldown")
	}
	if got := c.of("azure"); len(got) != 1 || got[0].Model != "dep-a" || got[0].CoolingUntil == nil || got[0].FailuresInRow != 1 {
		t.Errorf("the page's view: %+v", got)
	}
}

// TestCooldownBound: model names clients chose (a glob route without a
// rename) cannot grow the records past maxCooldowns.
func TestCooldownBound(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newCooldowns(clk.now)
	for i := range maxCooldowns {
		c.failed("b", fmt.Sprintf("m-%d", i), 0) // a count, no cooldown
	}
	c.failed("b", "cooling", time.Minute) // drops the counts to make room
	if _, cooling := c.cooling("b", "cooling"); !cooling || len(c.m) != 1 {
		t.Fatalf("cooling %v with %d records", cooling, len(c.m))
	}
	for i := range 2 * maxCooldowns {
		c.failed("b", fmt.Sprintf("x-%d", i), time.Minute)
	}
	if len(c.m) != maxCooldowns {
		t.Errorf("%d records, want at most %d", len(c.m), maxCooldowns)
	}
	if _, cooling := c.cooling("b", "cooling"); !cooling {
		t.Error("a full table dropped a pair still cooling")
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{" 30 ", 30 * time.Second},
		{"0", 0},
		{"-5", 0},
		{"soon", 0},
		{"86400", maxRetryAfter},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	} {
		h := http.Header{}
		if tc.value != "" {
			h.Set("Retry-After", tc.value)
		}
		if got := retryAfter(h, now); got != tc.want {
			t.Errorf("Retry-After %q = %v, want %v", tc.value, got, tc.want)
		}
	}
}
