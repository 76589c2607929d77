package caddymodule

import (
	"net/http"
	"sync"
	"time"
)

// The ops feed is what the usage page (ops_ui.go) shows of recent traffic
// besides the ledger: a bounded ring of the attempts that failed or fell
// back, and per-minute counts of requests and tokens by client, model and
// backend over the last hour. An attempt observer (attempt_hooks.go) feeds
// it at the end of every attempt. It keeps names, statuses, counts and
// louter's own one-line reasons: never a key, a header or a body. It is
// process-wide, so a config reload keeps it, and bounded: opsRingSize
// events, opsMinutes minutes of at most opsSeriesPerMinute series each
// (more are added up under "(other)").
const (
	opsRingSize        = 200
	opsMinutes         = 60
	opsSeriesPerMinute = 200
)

// opsEvent is one failed or fallen-back attempt.
type opsEvent struct {
	Time       time.Time `json:"time"`
	Kind       string    `json:"kind"` // "fallback": another backend took over; "error": the client got it
	Client     string    `json:"client,omitempty"`
	Model      string    `json:"model,omitempty"`
	Backend    string    `json:"backend"`
	Status     int       `json:"status,omitempty"`
	Reason     string    `json:"reason"`
	DurationMS int64     `json:"duration_ms"`
}

// opsSeriesKey names one series of a minute.
type opsSeriesKey struct {
	Client, Model, Backend string
}

// opsCount is a series' count in one minute.
type opsCount struct {
	Requests     int64 `json:"requests"`
	Errors       int64 `json:"errors"`
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

type opsMinute struct {
	start  time.Time // truncated to the minute
	series map[opsSeriesKey]*opsCount
}

type opsFeedState struct {
	mu      sync.Mutex
	ring    [opsRingSize]opsEvent
	next    int // where the next event goes
	n       int // events held, at most opsRingSize
	minutes []opsMinute
}

var opsFeed = &opsFeedState{}

// add records the end of an attempt.
func (f *opsFeedState) add(now time.Time, ev *opsEvent, key opsSeriesKey, in, out int64, final bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ev != nil {
		f.ring[f.next] = *ev
		f.next = (f.next + 1) % opsRingSize
		f.n = min(f.n+1, opsRingSize)
	}
	if !final {
		return // the attempt that answers counts the request
	}
	m := now.Truncate(time.Minute)
	if len(f.minutes) == 0 || !f.minutes[len(f.minutes)-1].start.Equal(m) {
		f.minutes = append(f.minutes, opsMinute{start: m, series: map[opsSeriesKey]*opsCount{}})
		cut := 0
		for cut < len(f.minutes) && f.minutes[cut].start.Before(m.Add(-opsMinutes*time.Minute+time.Minute)) {
			cut++
		}
		f.minutes = append(f.minutes[:0], f.minutes[cut:]...)
	}
	series := f.minutes[len(f.minutes)-1].series
	c := series[key]
	if c == nil {
		if len(series) >= opsSeriesPerMinute {
			key = opsSeriesKey{Client: "(other)", Model: "(other)", Backend: "(other)"}
			c = series[key]
		}
		if c == nil {
			c = new(opsCount)
			series[key] = c
		}
	}
	c.Requests++
	if ev != nil {
		c.Errors++
	}
	c.InputTokens += in
	c.OutputTokens += out
}

// opsPoint is one series' count in one minute, as the page gets it.
type opsPoint struct {
	Minute  time.Time `json:"minute"`
	Client  string    `json:"client"`
	Model   string    `json:"model"`
	Backend string    `json:"backend"`
	opsCount
}

// snapshot returns the events, newest first, and the series points of the
// last hour, oldest first.
func (f *opsFeedState) snapshot(now time.Time) ([]opsEvent, []opsPoint) {
	f.mu.Lock()
	defer f.mu.Unlock()
	events := make([]opsEvent, 0, f.n)
	for i := 1; i <= f.n; i++ {
		events = append(events, f.ring[(f.next-i+opsRingSize)%opsRingSize])
	}
	var points []opsPoint
	oldest := now.Truncate(time.Minute).Add(-opsMinutes*time.Minute + time.Minute)
	for _, m := range f.minutes {
		if m.start.Before(oldest) {
			continue
		}
		for k, c := range m.series {
			points = append(points, opsPoint{Minute: m.start, Client: k.Client, Model: k.Model, Backend: k.Backend, opsCount: *c})
		}
	}
	return events, points
}

// watchOps is the attemptWatcher that feeds the ops feed.
func (l *Louter) watchOps(r *http.Request, rw *responseWriter) {
	o := &opsObserver{start: time.Now(), client: metricClientName(l.access, clientOf(r))}
	if o.client == "" {
		o.client = "(anonymous)"
	}
	rw.addObserver(o, hookEnd)
}

// opsObserver watches one attempt for the ops feed.
type opsObserver struct {
	nopObserver
	start  time.Time
	client string
}

func (o *opsObserver) onEnd(oc *attemptOutcome, final bool) {
	now := time.Now()
	backend, model := oc.Backend, oc.Model
	var in, out int64
	if oc.HasUsage {
		in, out = int64(oc.Usage.InputTokens), int64(oc.Usage.OutputTokens)
	}
	var ev *opsEvent
	if reason := opsReason(oc); reason != "" || !final {
		kind := "error"
		if !final {
			kind = "fallback"
		}
		if reason == "" {
			reason = "the backend failed; the next one was tried"
		}
		ev = &opsEvent{Time: now, Kind: kind, Client: o.client, Model: model, Backend: backend,
			Status: oc.Status, Reason: reason, DurationMS: now.Sub(o.start).Milliseconds()}
	}
	opsFeed.add(now, ev, opsSeriesKey{Client: o.client, Model: model, Backend: backend}, in, out, final)
}

// opsReason says why an attempt failed, in louter's own words (never the
// backend's body, which may echo a key), or "" when it did not.
func opsReason(out *attemptOutcome) string {
	switch {
	case out.Timeout != nil:
		return "timeout: " + out.Timeout.Message
	case out.StreamFailed:
		return "the stream failed or ended early"
	case out.BadResponse:
		return "the backend's answer could not be decoded"
	case out.Status >= 500:
		return "backend error " + http.StatusText(out.Status)
	case out.Status == http.StatusTooManyRequests:
		return "rate limited"
	case out.Status >= 400:
		return "refused: " + http.StatusText(out.Status)
	}
	return ""
}
