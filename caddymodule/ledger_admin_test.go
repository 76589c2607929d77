package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/limits"
	"github.com/louter/louter/translate"
)

// The ledger is keyed by the route that served a request, not by the model
// name the client sent: a client cycling through made-up names matching
// one route adds one entry, not one per name (the ledger lives as long as
// the process).
func TestLedgerKeyedByRoute(t *testing.T) {
	const answer = `{"id":"x","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`
	l := &Louter{
		Backends: map[string]*Backend{"oai": {Protocol: translate.ProtocolOpenAIChat}},
		Models:   []ModelRoute{{Match: "to-openai*", Backend: "oai", Rename: "gpt-4o"}},
		ClientAccess: ClientAccess{
			Clients: []*ClientKey{{Name: "ledger-by-route", KeySHA256: sha256HexForTest("ledger-key")}},
			Prices:  []ModelPrice{{Match: "gpt-4o", Input: 1, Output: 1}},
		},
	}
	l = newLouter(t, l, map[string]caddyhttp.MiddlewareHandler{"oai": proxyLike(200, jsonHeader(answer), answer)})
	const n = 50
	for i := range n {
		r := newRequest("POST", "/v1/chat/completions", fmt.Sprintf(`{"model":"to-openai-%d","messages":[{"role":"user","content":"hi"}]}`, i))
		r.Header.Set("Authorization", "Bearer ledger-key")
		rec := newFlushRecorder()
		if err, p := serve(l, rec, r, nil); err != nil || p != nil || rec.Code != http.StatusOK {
			t.Fatalf("request %d: %v %v %d %s", i, err, p, rec.Code, rec.Body)
		}
	}
	c := l.access.ledger.(*limits.Ledger).Report().Clients["ledger-by-route"]
	if c == nil || len(c.Models) != 1 || c.Models["to-openai*"] == nil {
		t.Fatalf("ledger entries of the client: %+v, want one, to-openai*", c)
	}
	if e := c.Models["to-openai*"]; e.Requests != n || e.InputTokens != 10*n || e.CostUSD != float64(12*n)/1e6 {
		t.Errorf("to-openai*: %+v, want %d requests, %d input tokens, $%v", e, n, 10*n, float64(12*n)/1e6)
	}
}

// TestUsageSince checks that the ledger report's since is when counting
// began, not the time of the query: two queries a moment apart say the
// same, and it is before either was made.
func TestUsageSince(t *testing.T) {
	query := func() time.Time {
		w := httptest.NewRecorder()
		if err := serveUsage(w, httptest.NewRequest("GET", "/louter/usage", nil)); err != nil || w.Code != http.StatusOK {
			t.Fatalf("usage: %v %d %s", err, w.Code, w.Body)
		}
		var rep struct{ Since time.Time }
		if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		return rep.Since
	}
	check := func(what string) {
		before := time.Now()
		first := query()
		time.Sleep(20 * time.Millisecond)
		second := query()
		if !first.Equal(second) || !first.Before(before) {
			t.Errorf("%s: since %v then %v, queried from %v", what, first, second, before)
		}
	}
	check("no ledger")
	// With a ledger: a handler with a client holds one.
	_ = newLouter(t, &Louter{
		Backends:     map[string]*Backend{"oai": {Protocol: translate.ProtocolOpenAIChat}},
		Models:       []ModelRoute{{Match: "*", Backend: "oai"}},
		ClientAccess: ClientAccess{Clients: []*ClientKey{{Name: "since", KeySHA256: sha256HexForTest("since-key")}}},
	}, map[string]caddyhttp.MiddlewareHandler{"oai": proxyLike(200, nil, "")})
	time.Sleep(20 * time.Millisecond)
	check("ledger")
}
