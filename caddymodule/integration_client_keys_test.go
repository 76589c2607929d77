package caddymodule_test

// Client keys and limits through a real Caddy: each refusal (no key, an
// unknown key, a forbidden model, a limit) in each client protocol, as the
// official SDKs see it, with the provider's status, error shape,
// Retry-After and rate-limit headers; then the usage ledger.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"

	"github.com/louter/louter/caddymodule"
	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/limits"
)

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// keysCaddyfile has a client per test role: alice may use every model
// without limits, bob (key from the environment) only none-*, carol one
// request per window, dave a 50-token window; X-Test-User names a client
// the way forward_auth's copied header would.
func keysCaddyfile() string {
	return strings.NewReplacer("{ALICE}", sha256Hex("alice-key"), "{CAROL}", sha256Hex("carol-key")).Replace(`
:{PORT0} {
	bind 127.0.0.1
	louter {
		identity {http.request.header.X-Test-User}
		client alice {
			key_sha256 {ALICE}
		}
		client bob {
			key_env LOUTER_TEST_BOB_KEY
			models none-*
		}
		client carol {
			key_sha256 {CAROL}
			requests 1/30d
		}
		client dave {
			key_env LOUTER_TEST_DAVE_KEY
			tokens 50/30d
		}
		price to-* input 2 output 10
		backend anth {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend resp {
			protocol openai_responses
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend gem {
			protocol gemini
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model to-anthropic anth
		model to-openai_chat oai
		model to-openai_responses resp
		model to-gemini gem
		model limited-route oai {
			requests 1/30d
		}
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name keys-mock
	}
}
`)
}

// sdkCall makes one call with a protocol's official SDK and returns the
// HTTP status and error body of its failure (0, "" on success) with the
// response's headers.
type sdkCall func(t *testing.T, base, key, model string) (int, string, http.Header)

var keySDKs = map[string]sdkCall{
	"anthropic": func(t *testing.T, base, key, model string) (int, string, http.Header) {
		c := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(key), aoption.WithMaxRetries(0))
		_, err := c.Messages.New(context.Background(), anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: 50,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
		var ae *anthropic.Error
		if errors.As(err, &ae) {
			return ae.StatusCode, ae.RawJSON(), ae.Response.Header
		}
		return sdkOK(t, err)
	},
	"openai_chat": func(t *testing.T, base, key, model string) (int, string, http.Header) {
		c := openai.NewClient(ooption.WithBaseURL(base+"/v1/"), ooption.WithAPIKey(key), ooption.WithMaxRetries(0))
		_, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: model,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
		var oe *openai.Error
		if errors.As(err, &oe) {
			return oe.StatusCode, oe.RawJSON(), oe.Response.Header
		}
		return sdkOK(t, err)
	},
	"openai_responses": func(t *testing.T, base, key, model string) (int, string, http.Header) {
		c := openai.NewClient(ooption.WithBaseURL(base+"/v1/"), ooption.WithAPIKey(key), ooption.WithMaxRetries(0))
		_, err := c.Responses.New(context.Background(), responses.ResponseNewParams{Model: model,
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
		var oe *openai.Error
		if errors.As(err, &oe) {
			return oe.StatusCode, oe.RawJSON(), oe.Response.Header
		}
		return sdkOK(t, err)
	},
	"gemini": func(t *testing.T, base, key, model string) (int, string, http.Header) {
		var hdr http.Header
		c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI,
			HTTPOptions: genai.HTTPOptions{BaseURL: base + "/"}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Models.GenerateContent(context.Background(), model, genai.Text("hi"), nil)
		var ge genai.APIError
		if errors.As(err, &ge) {
			b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": ge.Code, "status": ge.Status, "message": ge.Message, "details": ge.Details}})
			return ge.Code, string(b), hdr
		}
		return sdkOK(t, err)
	},
}

func sdkOK(t *testing.T, err error) (int, string, http.Header) {
	t.Helper()
	if err != nil {
		t.Fatalf("not an API error: %v", err)
	}
	return 0, "", nil
}

func TestIntegrationClientKeys(t *testing.T) {
	t.Setenv("LOUTER_TEST_BOB_KEY", "bob-key")
	t.Setenv("LOUTER_TEST_DAVE_KEY", "dave-key")
	ports := testcaddy.Start(t, keysCaddyfile())
	testcaddy.WaitListening(t, ports[1])
	base := testcaddy.URL(ports[0])

	// want: the status and the error's type (Anthropic, OpenAI) or
	// status and reason (Gemini) for each client protocol.
	tests := []struct {
		name, key, model string
		want             map[string][2]string
	}{
		{"unknown key", "wrong-key", "", map[string][2]string{
			"anthropic":        {"401", "authentication_error"},
			"openai_chat":      {"401", "invalid_api_key"},
			"openai_responses": {"401", "invalid_api_key"},
			"gemini":           {"400", "API_KEY_INVALID"},
		}},
		{"forbidden model", "bob-key", "", map[string][2]string{
			"anthropic":        {"403", "permission_error"},
			"openai_chat":      {"403", "permission_error"},
			"openai_responses": {"403", "permission_error"},
			"gemini":           {"403", "PERMISSION_DENIED"},
		}},
		{"allowed", "alice-key", "", nil},
		{"first request in the window", "carol-key", "", nil}, // each protocol's first carol call: only anthropic's passes
	}
	for _, tt := range tests {
		for _, p := range []string{"anthropic", "openai_chat", "openai_responses", "gemini"} {
			t.Run(tt.name+"/"+p, func(t *testing.T) {
				status, body, _ := keySDKs[p](t, base, tt.key, "to-"+p)
				if tt.key == "carol-key" {
					if p == "anthropic" && status != 0 {
						t.Fatalf("carol's first request refused: %d %s", status, body)
					}
					return // the rest are checked by TestIntegrationClientKeyLimits' shape checks below
				}
				want, ok := tt.want[p]
				if !ok {
					if status != 0 {
						t.Fatalf("refused: %d %s", status, body)
					}
					return
				}
				if strconv.Itoa(status) != want[0] {
					t.Fatalf("status %d, want %s: %s", status, want[0], body)
				}
				if !strings.Contains(body, `"`+want[1]+`"`) {
					t.Errorf("error does not say %s: %s", want[1], body)
				}
				if strings.Contains(body, tt.key) {
					t.Errorf("the key is in the answer: %s", body)
				}
			})
		}
	}

	// carol's window is used up: every protocol gets its own 429.
	for _, p := range []string{"anthropic", "openai_chat", "openai_responses", "gemini"} {
		t.Run("rate limited/"+p, func(t *testing.T) {
			status, body, h := keySDKs[p](t, base, "carol-key", "to-"+p)
			if status != 429 {
				t.Fatalf("status %d, want 429: %s", status, body)
			}
			want := map[string]string{"anthropic": "rate_limit_error", "openai_chat": "rate_limit_exceeded",
				"openai_responses": "rate_limit_exceeded", "gemini": "RESOURCE_EXHAUSTED"}[p]
			if !strings.Contains(body, `"`+want+`"`) {
				t.Errorf("error does not say %s: %s", want, body)
			}
			if p == "gemini" {
				return // the genai SDK's error carries no headers; see the raw check below
			}
			if ra, _ := strconv.Atoi(h.Get("Retry-After")); ra <= 0 {
				t.Errorf("Retry-After %q", h.Get("Retry-After"))
			}
			switch p {
			case "anthropic":
				if h.Get("Anthropic-Ratelimit-Requests-Limit") != "1" || h.Get("Anthropic-Ratelimit-Requests-Remaining") != "0" {
					t.Errorf("rate-limit headers: %v", h)
				}
				if _, err := time.Parse(time.RFC3339, h.Get("Anthropic-Ratelimit-Requests-Reset")); err != nil {
					t.Errorf("reset: %v", err)
				}
			default:
				if h.Get("X-Ratelimit-Limit-Requests") != "1" || h.Get("X-Ratelimit-Remaining-Requests") != "0" {
					t.Errorf("rate-limit headers: %v", h)
				}
				if _, err := time.ParseDuration(h.Get("X-Ratelimit-Reset-Requests")); err != nil {
					t.Errorf("reset: %v", err)
				}
			}
		})
	}

	rawTests := []struct {
		name, path, body string
		headers          []string
		status           int
		check            func(gjson.Result) bool
		retryAfter       bool
	}{
		{"no key (anthropic)", "/v1/messages", `{"model":"to-anthropic","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
			[]string{"Anthropic-Version", "2023-06-01"}, 401, func(r gjson.Result) bool { return r.Get("error.type").Str == "authentication_error" }, false},
		{"no key (gemini)", "/v1beta/models/to-gemini:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}]}`,
			nil, 403, func(r gjson.Result) bool { return r.Get("error.status").Str == "PERMISSION_DENIED" }, false},
		{"no key (model list)", "/v1/models", "", nil, 401, func(r gjson.Result) bool { return r.Get("error.code").Str == "invalid_api_key" }, false},
		{"gemini ?key= rate limited", "/v1beta/models/to-gemini:generateContent?key=carol-key", `{"contents":[{"parts":[{"text":"hi"}]}]}`,
			nil, 429, func(r gjson.Result) bool { return r.Get("error.details.0.retryDelay").Str != "" }, true},
		{"identity from another handler", "/v1/chat/completions", `{"model":"to-openai_chat","messages":[{"role":"user","content":"hi"}]}`,
			[]string{"X-Test-User", "erin"}, 200, func(gjson.Result) bool { return true }, false},
		{"tokens: estimate over the window", "/v1/chat/completions", `{"model":"to-openai_chat","messages":[{"role":"user","content":"` + strings.Repeat("many words here ", 40) + `"}]}`,
			[]string{"Authorization", "Bearer dave-key"}, 429, func(r gjson.Result) bool { return strings.Contains(r.Get("error.message").Str, "tokens") }, true},
		{"forbidden model (count_tokens)", "/v1/messages/count_tokens", `{"model":"to-anthropic","messages":[{"role":"user","content":"hi"}]}`,
			[]string{"X-Api-Key", "bob-key", "Anthropic-Version", "2023-06-01"}, 403, func(r gjson.Result) bool { return r.Get("error.type").Str == "permission_error" }, false},
		{"forbidden model (embeddings)", "/v1/embeddings", `{"model":"to-openai_chat","input":"hi"}`,
			[]string{"Authorization", "Bearer bob-key"}, 403, func(r gjson.Result) bool { return r.Get("error.type").Str == "permission_error" }, false},
		{"allowed model (count_tokens)", "/v1/messages/count_tokens", `{"model":"to-anthropic","messages":[{"role":"user","content":"hi"}]}`,
			[]string{"X-Api-Key", "alice-key", "Anthropic-Version", "2023-06-01"}, 200, func(r gjson.Result) bool { return r.Get("input_tokens").Int() > 0 }, false},
		{"route limit, first", "/v1/chat/completions", `{"model":"limited-route","messages":[{"role":"user","content":"hi"}]}`,
			[]string{"Authorization", "Bearer alice-key"}, 200, func(gjson.Result) bool { return true }, false},
		{"route limit, second", "/v1/chat/completions", `{"model":"limited-route","messages":[{"role":"user","content":"hi"}]}`,
			[]string{"Authorization", "Bearer alice-key"}, 429, func(r gjson.Result) bool { return strings.Contains(r.Get("error.message").Str, "route limited-route") }, true},
	}
	for _, tt := range rawTests {
		t.Run(tt.name, func(t *testing.T) {
			method := http.MethodPost
			if tt.body == "" {
				method = http.MethodGet
			}
			req, _ := http.NewRequest(method, base+tt.path, strings.NewReader(tt.body))
			for i := 0; i+1 < len(tt.headers); i += 2 {
				req.Header.Set(tt.headers[i], tt.headers[i+1])
			}
			resp, err := testcaddy.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !tt.check(gjson.ParseBytes(b)) {
				t.Fatalf("status %d (want %d): %s", resp.StatusCode, tt.status, b)
			}
			if tt.retryAfter && resp.Header.Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
		})
	}

	// The ledger has alice's successful calls, priced.
	rec := httptest.NewRecorder()
	route := caddymodule.UsageAdmin{}.Routes()[0]
	if err := route.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, route.Pattern, nil)); err != nil {
		t.Fatal(err)
	}
	var rep limits.LedgerReport
	if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	alice := rep.Clients["alice"]
	if alice == nil || alice.Models["to-gemini"] == nil {
		t.Fatalf("alice is not in the ledger: %s", rec.Body)
	}
	e := alice.Models["to-gemini"]
	if e.Requests != 1 || e.InputTokens == 0 || e.OutputTokens == 0 {
		t.Errorf("alice's to-gemini entry: %+v\n%s", e, rec.Body)
	}
	if want := float64(e.InputTokens*2+e.OutputTokens*10) / 1e6; e.CostUSD != want {
		t.Errorf("cost %v, want %v", e.CostUSD, want)
	}
	if rep.Clients["bob"] != nil || rep.Clients["erin"] == nil {
		t.Errorf("ledger clients: %s", rec.Body)
	}
}

// TestIntegrationKeyTablePathTricks sends, over a raw connection so that
// no client cleans the request target, the path shapes that once reached a
// backend with no key (a second .../v1beta/models/ behind another resource,
// doubled slashes, dot segments, a leading prefix): each is refused or left
// to Caddy, none is served. (The handler sees the same request over h2c;
// TestKeyTableNoBypass covers the shapes exhaustively.)
func TestIntegrationKeyTablePathTricks(t *testing.T) {
	t.Setenv("LOUTER_TEST_BOB_KEY", "bob-key")
	t.Setenv("LOUTER_TEST_DAVE_KEY", "dave-key")
	ports := testcaddy.Start(t, keysCaddyfile())
	testcaddy.WaitListening(t, ports[1])
	body := `{"contents":[{"parts":[{"text":"hi"}]}],"messages":[{"role":"user","content":"hi"}],"model":"to-gemini","max_tokens":5}`
	for _, target := range []string{
		"/v1beta/x/v1beta/models/to-gemini:generateContent",
		"/v1beta/x//v1beta/models/to-gemini:streamGenerateContent?alt=sse",
		"/v1beta/x/v1beta/models/to-gemini:countTokens",
		"//v1beta/x/v1beta/models/to-gemini:generateContent",
		"/zz/v1beta/%2e%2e/v1beta/models/to-gemini:generateContent",
		"/v1beta/files/v1beta/models/to-gemini:generateContent",
		"/v1/x/v1/models/to-gemini:generateContent",
		"/zz/v1beta/models/to-gemini:generateContent",
		"/v1/messages",
	} {
		for _, key := range []string{"", "wrong-key"} {
			conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(ports[0]))
			if err != nil {
				t.Fatal(err)
			}
			req := "POST " + target + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: close\r\n"
			if key != "" {
				req += "X-Goog-Api-Key: " + key + "\r\n"
			}
			req += "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.WriteString(conn, req); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("%s: %v", target, err)
			}
			b, _ := io.ReadAll(resp.Body)
			conn.Close()
			// Refused (4xx), or left to the site: this one has no other
			// handler, so Caddy answers an empty 200.
			left := resp.StatusCode == http.StatusOK && len(b) == 0
			if !left && resp.StatusCode < 400 || strings.Contains(string(b), "candidates") {
				t.Errorf("%s (key %q): %d %s", target, key, resp.StatusCode, b)
			}
		}
	}
}
