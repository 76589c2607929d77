package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Each attempt of a chain starts from the client's request: what the
// rewrite for one backend changed (headers, path, query) is undone.
func TestRequestSnapshotRestore(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/anthropic/v1/messages?beta=true", strings.NewReader(`{}`))
	r.Header.Set("X-Api-Key", "sk-client")
	r.Header.Set("Anthropic-Version", "2023-06-01")
	r.Header.Add("X-Mock-Scenario", "a")
	hdr := r.Header // Caddy's access log holds the map
	snap := snapshotRequest(r)

	b := &Backend{Protocol: "openai_chat", basePath: "/v1", apiKey: "sk-backend"}
	rewriteRequest(r, backendRequest{backend: b, body: []byte(`{"model":"m"}`), model: "m"})
	if r.URL.Path != "/v1/chat/completions" || r.Header.Get("X-Api-Key") != "" {
		t.Fatalf("the rewrite did not happen: %s %v", r.URL, r.Header)
	}

	snap.restore(r)
	if r.URL.Path != "/anthropic/v1/messages" || r.URL.RawQuery != "beta=true" || r.RequestURI != "/anthropic/v1/messages?beta=true" {
		t.Errorf("URL %s, RequestURI %s", r.URL, r.RequestURI)
	}
	if r.Header.Get("X-Api-Key") != "sk-client" || r.Header.Get("Anthropic-Version") != "2023-06-01" || r.Header.Get("X-Mock-Scenario") != "a" {
		t.Errorf("headers %v", r.Header)
	}
	if r.Header.Get("Accept") != "" {
		t.Errorf("a header the rewrite added survived: %v", r.Header)
	}
	r.Header["X-Mock-Scenario"][0] = "again"
	snap.restore(r)
	if r.Header.Get("X-Mock-Scenario") != "a" {
		t.Errorf("the snapshot shares values with the request: %v", r.Header)
	}
	hdr.Set("X-Probe", "1")
	if r.Header.Get("X-Probe") != "1" {
		t.Error("restore replaced the header map")
	}
}

func TestRetryableStatus(t *testing.T) {
	for status, want := range map[int]bool{429: true, 500: true, 502: true, 503: true, 504: true, 529: true, 400: false, 401: false, 404: false, 413: false} {
		if got := retryableStatus(status); got != want {
			t.Errorf("retryableStatus(%d) = %v", status, got)
		}
	}
}
