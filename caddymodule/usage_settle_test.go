package caddymodule

import (
	"testing"

	"github.com/louter/louter/limits"
	"github.com/louter/louter/translate"
)

// TestBilledUsage: what limits and the ledger count of an attempt — the
// reported usage, never below zero; an estimate, never zero, when none was
// reported; nothing when the backend refused or was not reached.
func TestBilledUsage(t *testing.T) {
	const estimate = 40
	tests := []struct {
		name          string
		mode          writeMode
		status        int
		usage         *translate.Usage
		failed        bool
		counted       int64
		want          limits.Usage
		wantEstimated bool
	}{
		{"reported", modePassSSE, 200, &translate.Usage{InputTokens: 30, OutputTokens: 7, CacheReadTokens: 10}, false, 9,
			limits.Usage{Input: 30, Output: 7, CacheRead: 10}, false},
		{"reported negative, from a codec that does not clamp", modeStream, 200, &translate.Usage{InputTokens: 30, OutputTokens: -500, CacheWriteTokens: -3}, false, 0,
			limits.Usage{Input: 30}, false},
		{"none reported: the estimate and the counted output", modePassSSE, 200, nil, false, 12,
			limits.Usage{Input: estimate, Output: 12}, true},
		{"a JSON answer without usage (all zero)", modeJSON, 200, &translate.Usage{}, false, 5,
			limits.Usage{Input: estimate, Output: 5}, true},
		{"failed after message_start's one output token", modePassSSE, 200, &translate.Usage{InputTokens: 30, OutputTokens: 1}, true, 12,
			limits.Usage{Input: 30, Output: 12}, true},
		{"failed after its usage", modeStream, 200, &translate.Usage{InputTokens: 30, OutputTokens: 20}, true, 12,
			limits.Usage{Input: 30, Output: 20}, false},
		{"refused by the backend", modePassError, 429, nil, false, 0, limits.Usage{}, false},
		{"backend not reached", modeUnset, 0, nil, false, 0, limits.Usage{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw := &responseWriter{mode: tt.mode, status: tt.status, streamFailed: tt.failed}
			if tt.usage != nil {
				rw.usage, rw.hasUsage = *tt.usage, true
			}
			rw.count.tokens = tt.counted
			got, estimated := rw.outcome().billedUsage(estimate)
			if got != tt.want || estimated != tt.wantEstimated {
				t.Errorf("got %+v (estimated %v), want %+v (%v)", got, estimated, tt.want, tt.wantEstimated)
			}
		})
	}
}

// TestOutputCount: the output is counted from deltas, and from a complete
// answer only when it reported no usage.
func TestOutputCount(t *testing.T) {
	c := outputCount{on: true}
	c.event(&translate.Event{Type: translate.EventBlockStart, Text: "ignored"})
	c.event(&translate.Event{Type: translate.EventBlockDelta, Text: "Hello there, how are you doing today?"})
	if c.tokens < 5 {
		t.Fatalf("a sentence counted as %d tokens", c.tokens)
	}
	n := c.tokens
	resp := &translate.Response{Parts: []translate.Part{{Type: translate.PartText, Text: "Hello there"},
		{Type: translate.PartToolCall, ToolCall: &translate.ToolCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}}
	resp.Usage.OutputTokens = 3
	c.response(resp)
	if c.tokens != n {
		t.Fatalf("an answer with usage was counted: %d", c.tokens)
	}
	resp.Usage = translate.Usage{}
	c.response(resp)
	if c.tokens <= n+2 {
		t.Fatalf("an answer without usage counted as %d tokens", c.tokens-n)
	}
}
