package testcaddy

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Send sends a request with Client and returns the response, whose body
// is closed when the test ends. A body, when there is one, is sent as
// JSON; header holds name, value pairs, set after the Content-Type. A
// request that cannot be sent fails the test.
func Send(tb testing.TB, method, url, body string, header ...string) *http.Response {
	tb.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := Client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { resp.Body.Close() })
	return resp
}

// Do is Send that reads the whole answer: it returns the status and the
// body, and fails the test when the body cannot be read.
func Do(tb testing.TB, method, url, body string, header ...string) (int, []byte) {
	tb.Helper()
	resp := Send(tb, method, url, body, header...)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		tb.Fatalf("%s %s: reading the answer: %v", method, url, err)
	}
	return resp.StatusCode, b
}

// Get is a GET that must answer 200: it returns the body, and fails the
// test on any other status.
func Get(tb testing.TB, url string, header ...string) []byte {
	tb.Helper()
	status, body := Do(tb, http.MethodGet, url, "", header...)
	if status != http.StatusOK {
		tb.Fatalf("GET %s: status %d: %.500s", url, status, body)
	}
	return body
}

// Scrape reads a Prometheus text endpoint (Caddy's metrics): every
// series, its name with its labels as exposed, to its value.
func Scrape(tb testing.TB, url string) map[string]float64 {
	tb.Helper()
	body := Get(tb, url)
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			tb.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// Sum adds the series of metric name in m (as Scrape returns it) whose
// labels include all of labels (`k="v"` each).
func Sum(m map[string]float64, name string, labels ...string) float64 {
	var n float64
	for series, v := range m {
		metric, rest, _ := strings.Cut(series, "{")
		if metric != name {
			continue
		}
		ok := true
		for _, l := range labels {
			if !strings.Contains(rest, l) {
				ok = false
				break
			}
		}
		if ok {
			n += v
		}
	}
	return n
}
