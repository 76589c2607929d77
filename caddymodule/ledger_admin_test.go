package caddymodule

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

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
	c := l.access.ledger.Report().Clients["ledger-by-route"]
	if c == nil || len(c.Models) != 1 || c.Models["to-openai*"] == nil {
		t.Fatalf("ledger entries of the client: %+v, want one, to-openai*", c)
	}
	if e := c.Models["to-openai*"]; e.Requests != n || e.InputTokens != 10*n || e.CostUSD != float64(12*n)/1e6 {
		t.Errorf("to-openai*: %+v, want %d requests, %d input tokens, $%v", e, n, 10*n, float64(12*n)/1e6)
	}
}
