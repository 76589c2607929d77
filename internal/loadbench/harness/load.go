package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Protocol is the protocol of a client's streamed response, which says how
// Validate recognizes a complete one.
type Protocol int

const (
	// OpenAIChat streams end with "data: [DONE]"; the tool call is in
	// tool_calls.
	OpenAIChat Protocol = iota
	// Anthropic streams end with a message_stop event; the tool call is a
	// tool_use block.
	Anthropic
)

// Validate checks that a streamed response is complete: its last event is
// the protocol's end event and it carries the upstream's tool call.
func (p Protocol) Validate(body []byte) error {
	body = bytes.TrimRight(body, "\n")
	var end, tool []byte
	switch p {
	case Anthropic:
		// The last event: "event: message_stop\ndata: {...}".
		i := bytes.LastIndex(body, []byte("event: "))
		if i < 0 || !bytes.HasPrefix(body[i:], []byte("event: message_stop\n")) {
			return fmt.Errorf("the stream does not end with message_stop: …%s", tail(body))
		}
		end, tool = nil, []byte(`"type":"tool_use"`)
	default:
		end, tool = []byte("data: [DONE]"), []byte(`"tool_calls"`)
	}
	if end != nil && !bytes.HasSuffix(body, end) {
		return fmt.Errorf("the stream does not end with %q: …%s", end, tail(body))
	}
	if !bytes.Contains(body, tool) || !bytes.Contains(body, []byte(`"name":"`+ToolName+`"`)) {
		return fmt.Errorf("the stream lacks the %s tool call", ToolName)
	}
	return nil
}

func tail(b []byte) []byte { return b[max(0, len(b)-200):] }

// Request is one kind of streaming request a load sends.
type Request struct {
	URL      string
	Body     []byte
	Protocol Protocol // of the response
}

// LoadResult is what a load measured on the client side.
type LoadResult struct {
	Requests int
	Errors   int
	// FirstError describes the first failure, if any.
	FirstError string
	// Latencies and TTFBs, one per successful request, sorted: the time
	// to the end of the stream and to its first body byte.
	Latencies, TTFBs []time.Duration
	Wall             time.Duration
}

// Percentile is the p-th percentile (0 < p ≤ 100) of sorted durations,
// by the nearest-rank method; 0 when there are none.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// NewClient returns an HTTP client for loopback loads of up to conns
// concurrent streams: no proxy, no compression, a connection kept per
// worker, and a bound on every request.
func NewClient(conns int, timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:               nil,
			DisableCompression:  true,
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			IdleConnTimeout:     time.Minute,
		},
	}
}

// Load sends n requests, conc at a time, and validates every response.
func Load(client *http.Client, req Request, n, conc int) LoadResult {
	var t Tally
	wall := Workers(n, conc, func(buf *bytes.Buffer) { t.Add(Do(client, req, buf)) })
	res := t.Result()
	res.Wall = wall
	return res
}

// Workers runs job n times, conc at a time, and returns how long all of
// them took. A worker passes every job it runs the same buffer, its own,
// to read responses into.
func Workers(n, conc int, job func(buf *bytes.Buffer)) time.Duration {
	var wg sync.WaitGroup
	jobs := make(chan struct{})
	start := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			for range jobs {
				job(&buf)
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	return time.Since(start)
}

// Tally collects the outcomes of requests sent concurrently: it is safe
// for concurrent use, and its zero value is ready.
type Tally struct {
	mu  sync.Mutex
	res LoadResult
}

// Add records one request: its latency and time to first byte, or the
// error it failed with.
func (t *Tally) Add(latency, ttfb time.Duration, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.res.Requests++
	if err != nil {
		t.res.Errors++
		if t.res.FirstError == "" {
			t.res.FirstError = err.Error()
		}
		return
	}
	t.res.Latencies = append(t.res.Latencies, latency)
	t.res.TTFBs = append(t.res.TTFBs, ttfb)
}

// Result is what was added, the durations sorted (Wall is left zero).
// Call it once the requests are done.
func (t *Tally) Result() LoadResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	slices.Sort(t.res.Latencies)
	slices.Sort(t.res.TTFBs)
	return t.res
}

// Do sends one streaming request, reads the whole response into buf and
// validates it. It returns the time to the end of the response and to
// its first body byte.
func Do(client *http.Client, req Request, buf *bytes.Buffer) (latency, ttfb time.Duration, err error) {
	hr, err := http.NewRequest(http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return 0, 0, err
	}
	hr.Header.Set("Content-Type", "application/json")
	latency, ttfb, err = Send(client, hr, buf)
	if err == nil {
		err = req.Protocol.Validate(buf.Bytes())
	}
	if err != nil {
		return 0, 0, err
	}
	return latency, ttfb, nil
}

// Send sends req and reads its whole response into buf, which it resets
// first. It returns the time to the end of the response and to its first
// body byte; a failed read and a status other than 200 (with the start
// of the body) are errors.
func Send(client *http.Client, req *http.Request, buf *bytes.Buffer) (latency, ttfb time.Duration, err error) {
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	buf.Reset()
	// The first read returns when the first event arrives.
	var first [512]byte
	k, rerr := resp.Body.Read(first[:])
	ttfb = time.Since(start)
	buf.Write(first[:k])
	if rerr == nil {
		_, rerr = buf.ReadFrom(resp.Body)
	} else if errors.Is(rerr, io.EOF) {
		rerr = nil
	}
	latency = time.Since(start)
	if rerr != nil {
		return 0, 0, fmt.Errorf("reading the stream: %w", rerr)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("status %d: %.300s", resp.StatusCode, buf.Bytes())
	}
	return latency, ttfb, nil
}
