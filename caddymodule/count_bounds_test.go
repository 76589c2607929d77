package caddymodule

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// countBoundsLouter routes claude* to an OpenAI Chat backend (counted
// locally) and held* to an Anthropic backend whose counting endpoint
// answers only once hold is closed, so a test can keep a call in progress.
func countBoundsLouter(t *testing.T, l *Louter, hold <-chan struct{}, asked chan<- struct{}) *Louter {
	t.Helper()
	l.Backends = map[string]*Backend{
		"oai":  {Protocol: translate.ProtocolOpenAIChat},
		"anth": {Protocol: translate.ProtocolAnthropic},
	}
	l.Models = []ModelRoute{{Match: "claude*", Backend: "oai"}, {Match: "held*", Backend: "anth"}}
	answer := proxyLike(http.StatusOK, jsonHeader(`{"input_tokens":7}`), `{"input_tokens":7}`)
	held := upstreamFunc(func(w http.ResponseWriter, r *http.Request) error {
		asked <- struct{}{}
		<-hold
		return answer(w, r)
	})
	return newLouter(t, l, map[string]caddyhttp.MiddlewareHandler{"oai": answer, "anth": held})
}

// countRequest is a counting call of protocol p for model, with body
// padded by pad bytes of white space, carrying key.
func countRequest(p translate.Protocol, model string, pad int, key string) *http.Request {
	body := `{"messages":[{"role":"user","content":"hi"}],"model":"` + model + `"` + strings.Repeat(" ", pad) + `}`
	target := "/v1/messages/count_tokens"
	if p == translate.ProtocolGemini {
		body = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]` + strings.Repeat(" ", pad) + `}`
		target = "/v1beta/models/" + model + ":countTokens"
	}
	r := newRequest(http.MethodPost, target, body)
	if key != "" {
		r.Header.Set("X-Api-Key", key)
		r.Header.Set("X-Goog-Api-Key", key)
	}
	return r
}

// serveCount serves r and returns the answer.
func serveCount(t *testing.T, l *Louter, r *http.Request) *flushRecorder {
	t.Helper()
	rec := newFlushRecorder()
	if err := l.ServeHTTP(rec, r, &nextRecorder{}); err != nil {
		t.Fatal(err)
	}
	return rec
}

// errorMessage is the message of an error answer in protocol p's shape.
func errorMessage(p translate.Protocol, body string) string {
	if p == translate.ProtocolGemini {
		return gjson.Get(body, "error.message").String()
	}
	return gjson.Get(body, "error.message").String() + gjson.Get(body, "error.type").String()
}

func TestCountBodyLimit(t *testing.T) {
	tests := []struct {
		name     string
		maxCount int64
		maxBody  int64
		pad      int
		want     int
	}{
		{"default refuses 9 MiB", 0, 0, 9 << 20, http.StatusRequestEntityTooLarge},
		{"default takes 7 MiB", 0, 0, 7 << 20, http.StatusOK},
		{"max_count_body", 1 << 10, 0, 2 << 10, http.StatusRequestEntityTooLarge},
		{"max_count_body above the default", 12 << 20, 0, 9 << 20, http.StatusOK},
		{"max_request_body lower than the default", 0, 1 << 20, 2 << 20, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		for _, p := range []translate.Protocol{translate.ProtocolAnthropic, translate.ProtocolGemini} {
			t.Run(tt.name+"/"+string(p), func(t *testing.T) {
				l := countBoundsLouter(t, &Louter{MaxCountBody: tt.maxCount, MaxRequestBody: tt.maxBody}, nil, nil)
				rec := serveCount(t, l, countRequest(p, "claude-x", tt.pad, ""))
				if rec.Code != tt.want {
					t.Fatalf("status %d, want %d: %.300s", rec.Code, tt.want, rec.Body.String())
				}
				if tt.want == http.StatusOK {
					return
				}
				if msg := errorMessage(p, rec.Body.String()); !strings.Contains(msg, "token counting request body exceeds") {
					t.Errorf("error %q does not name the counting body limit: %s", msg, rec.Body.String())
				}
			})
		}
	}
}

func TestCountConcurrency(t *testing.T) {
	for _, p := range []translate.Protocol{translate.ProtocolAnthropic, translate.ProtocolGemini} {
		t.Run(string(p), func(t *testing.T) {
			hold, asked := make(chan struct{}), make(chan struct{}, 1)
			l := countBoundsLouter(t, &Louter{CountConcurrency: 1}, hold, asked)
			l.countWait = 20 * time.Millisecond
			var wg sync.WaitGroup
			var first *flushRecorder
			wg.Go(func() { first = serveCount(t, l, countRequest(translate.ProtocolAnthropic, "held-1", 0, "")) })
			<-asked // the first call holds the only turn
			start := time.Now()
			rec := serveCount(t, l, countRequest(p, "claude-x", 0, ""))
			if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
				t.Errorf("second call: status %d, Retry-After %q; want 503 with Retry-After: %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
			}
			if msg := errorMessage(p, rec.Body.String()); !strings.Contains(msg, "token counting calls are already in progress") {
				t.Errorf("error %q does not say why", msg)
			}
			if waited := time.Since(start); waited < l.countWait {
				t.Errorf("refused after %v, before waiting %v for a turn", waited, l.countWait)
			}
			close(hold)
			wg.Wait()
			if first.Code != http.StatusOK {
				t.Errorf("first call: status %d", first.Code)
			}
			// The turn was given back.
			if rec := serveCount(t, l, countRequest(p, "claude-x", 0, "")); rec.Code != http.StatusOK {
				t.Errorf("third call: status %d: %s", rec.Code, rec.Body.String())
			}
		})
	}
}

func TestCountClientLimits(t *testing.T) {
	tests := []struct {
		name   string
		limits Limits
		// held: the first call is kept in progress while the second is
		// made.
		held bool
		want int // the second call's status
	}{
		{"requests", Limits{Requests: "1/1m"}, false, http.StatusTooManyRequests},
		{"concurrent", Limits{Concurrent: 1}, true, http.StatusTooManyRequests},
		{"concurrent, one after the other", Limits{Concurrent: 1}, false, http.StatusOK},
		{"tokens do not apply", Limits{Tokens: "1/1m"}, false, http.StatusOK},
	}
	for _, tt := range tests {
		for _, p := range []translate.Protocol{translate.ProtocolAnthropic, translate.ProtocolGemini} {
			t.Run(tt.name+"/"+string(p), func(t *testing.T) {
				hold, asked := make(chan struct{}), make(chan struct{}, 1)
				// The counters outlive a Louter (a config reload keeps
				// them): each case is a client of its own.
				l := countBoundsLouter(t, &Louter{ClientAccess: ClientAccess{Clients: []*ClientKey{
					{Name: "count " + t.Name(), KeySHA256: sha256HexForTest("alice-key"), Limits: tt.limits},
				}}}, hold, asked)
				var wg sync.WaitGroup
				var first *flushRecorder
				if tt.held {
					wg.Go(func() { first = serveCount(t, l, countRequest(translate.ProtocolAnthropic, "held-1", 0, "alice-key")) })
					<-asked
				} else {
					first = serveCount(t, l, countRequest(p, "claude-x", 0, "alice-key"))
				}
				rec := serveCount(t, l, countRequest(p, "claude-x", 0, "alice-key"))
				close(hold)
				wg.Wait()
				if first.Code != http.StatusOK {
					t.Fatalf("first call: status %d: %s", first.Code, first.Body.String())
				}
				if rec.Code != tt.want {
					t.Fatalf("second call: status %d, want %d: %s", rec.Code, tt.want, rec.Body.String())
				}
				if tt.want == http.StatusTooManyRequests && rec.Header().Get("Retry-After") == "" {
					t.Error("a refusal without Retry-After")
				}
			})
		}
	}
}
