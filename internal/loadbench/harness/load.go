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
	var (
		mu  sync.Mutex
		res = LoadResult{Requests: n}
		wg  sync.WaitGroup
	)
	jobs := make(chan struct{})
	start := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			for range jobs {
				lat, ttfb, err := Do(client, req, &buf)
				mu.Lock()
				if err != nil {
					res.Errors++
					if res.FirstError == "" {
						res.FirstError = err.Error()
					}
				} else {
					res.Latencies = append(res.Latencies, lat)
					res.TTFBs = append(res.TTFBs, ttfb)
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	res.Wall = time.Since(start)
	slices.Sort(res.Latencies)
	slices.Sort(res.TTFBs)
	return res
}

// Do sends one streaming request, reads the whole response into buf and
// validates it. It returns the time to the end of the response and to
// its first body byte.
func Do(client *http.Client, req Request, buf *bytes.Buffer) (latency, ttfb time.Duration, err error) {
	start := time.Now()
	resp, err := client.Post(req.URL, "application/json", bytes.NewReader(req.Body))
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
	if err := req.Protocol.Validate(buf.Bytes()); err != nil {
		return 0, 0, err
	}
	return latency, ttfb, nil
}
