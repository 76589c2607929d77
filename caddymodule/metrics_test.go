package caddymodule

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/louter/louter/translate"
)

// Every louter handler of a config registers the same collectors; the
// second finds the first's and shares them instead of failing, and a new
// config's registry gets its own.
func TestRegisterMetricsShared(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	a, err := registerMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := registerMetrics(reg)
	if err != nil {
		t.Fatalf("second handler of one config: %v", err)
	}
	if a.requests != b.requests || a.tokens != b.tokens || a.dropped != b.dropped || a.streamsOpen != b.streamsOpen {
		t.Error("two handlers of one config got different collectors")
	}
	b.requests.WithLabelValues("anthropic", "", "b", "m*", "2xx", outcomeOK).Inc()
	if n := testutil.ToFloat64(a.requests.WithLabelValues("anthropic", "", "b", "m*", "2xx", outcomeOK)); n != 1 {
		t.Errorf("count seen through the first handler = %v, want 1", n)
	}
	c, err := registerMetrics(prometheus.NewPedanticRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if c.requests == a.requests {
		t.Error("a new registry shares the old one's collectors")
	}
	// The registry is pedantic: each metric's help and labels are consistent.
	if _, err := reg.Gather(); err != nil {
		t.Errorf("gather: %v", err)
	}
}

func TestCodeClassAndStatusKind(t *testing.T) {
	for _, tt := range []struct {
		status     int
		class, err string
	}{
		{0, "none", upstreamStatusOther},
		{200, "2xx", upstreamStatusOther},
		{302, "3xx", upstreamStatusOther},
		{400, "4xx", upstreamStatus4xx},
		{401, "4xx", upstreamStatus4xx},
		{429, "4xx", upstreamRateLimited},
		{500, "5xx", upstreamStatus5xx},
		{503, "5xx", upstreamOverloaded},
		{529, "5xx", upstreamOverloaded},
	} {
		if got := codeClass(tt.status); got != tt.class {
			t.Errorf("codeClass(%d) = %q, want %q", tt.status, got, tt.class)
		}
		if got := statusKind(tt.status); got != tt.err {
			t.Errorf("statusKind(%d) = %q, want %q", tt.status, got, tt.err)
		}
	}
}

func TestDroppedLabel(t *testing.T) {
	for _, tt := range []struct{ entry, want string }{
		{"seed: Anthropic has no seed", "seed"},
		{"messages.content.citations: citations are not translated", "messages"},
		{"metadata.session_xyz: not translated", "metadata"},
		{"whatever_the_client_sent: unknown field", "unknown"},
		{"tools.some_key: unknown field", "unknown"},
		{"too\xf5s: a codec naming a field after the client's bytes", "other"}, // Prometheus panics on invalid UTF-8
	} {
		if got := droppedLabel(tt.entry); got != tt.want {
			t.Errorf("droppedLabel(%q) = %q, want %q", tt.entry, got, tt.want)
		}
	}
}

// Past maxDroppedLabels distinct fields, new ones are counted as "other":
// a client that sends made-up fields cannot grow the label set.
func TestDroppedLabelBounded(t *testing.T) {
	others := 0
	for i := range maxDroppedLabels + 10 {
		if droppedLabel(fmt.Sprintf("bounded_test_%d: Gemini has no such thing", i)) == "other" {
			others++
		}
	}
	if others < 10 {
		t.Errorf("%d of %d distinct fields were folded into other, want at least 10", others, maxDroppedLabels+10)
	}
	if got := droppedLabel("seed: Anthropic has no seed"); got != "seed" {
		t.Errorf("a field seen before the bound is now %q", got)
	}
}

// BenchmarkStreamMetrics is BenchmarkServeHTTPStreamPerEvent without and
// with louter's metrics and access-log fields, to compare their cost per
// streamed request.
func BenchmarkStreamMetrics(b *testing.B) {
	events := benchOpenAIEvents()
	// Provisioned before the sub-benchmarks, whose runs are repeated.
	off, on := realLouter(b, proxyLike(200, sseHeader(), events...)), realLouter(b, proxyLike(200, sseHeader(), events...))
	off.metrics = nil
	for _, l := range []*Louter{off, on} {
		on := l == on
		b.Run(fmt.Sprintf("metrics=%v", on), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := newFlushRecorder()
				r := newRequest("POST", "/v1/messages", anthropicStreamRequest)
				if on {
					r = r.WithContext(context.WithValue(r.Context(), caddyhttp.ExtraLogFieldsCtxKey, new(caddyhttp.ExtraLogFields)))
				}
				if err := l.ServeHTTP(rec, r, &nextRecorder{}); err != nil || rec.Code != http.StatusOK {
					b.Fatal(err, rec.Code)
				}
				if !strings.Contains(rec.Body.String(), "message_stop") {
					b.Fatal("the stream did not end")
				}
			}
		})
	}
}

// BenchmarkExchangeRecord is the whole per-request cost of the exchange
// record with metrics and access-log fields on: begin, route, end with
// usage, a TTFT and a dropped field. Compared with a streamed request
// (BenchmarkStreamMetrics), it bounds what metrics add per request far
// more steadily than two timings of the whole request on a busy machine.
func BenchmarkExchangeRecord(b *testing.B) {
	l := realLouter(b, proxyLike(200, sseHeader()))
	route, _ := l.route("to-openai-x")
	base := newRequest("POST", "/v1/messages", "{}")
	rw := &responseWriter{hasUsage: true, usage: translate.Usage{InputTokens: 1200, OutputTokens: 210, CacheReadTokens: 1000, ReasoningTokens: 20}, stop: translate.StopToolUse, mode: modeStream}
	dropped := []string{"seed: Anthropic has no seed"}
	w := newFlushRecorder()
	b.ReportAllocs()
	for b.Loop() {
		// A request's own replacer and log fields, as Caddy makes them
		// (3 of the allocations).
		ctx := context.WithValue(base.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer())
		r := base.WithContext(context.WithValue(ctx, caddyhttp.ExtraLogFieldsCtxKey, new(caddyhttp.ExtraLogFields)))
		x := l.beginExchange(w, r, translate.ProtocolAnthropic)
		x.route(route.backend, route.Match, "to-openai-x", "gpt-4o")
		x.streaming(true)
		rw.firstContent = x.start.Add(time.Millisecond)
		x.end(rw.outcome(), dropped, false)
	}
}
