package caddymodule_test

// Integration tests of what surrounds the chat calls, through a real Caddy
// with the official SDKs: model lists and lookups in each protocol's
// shape, OpenAI embeddings and completions passed through, errors for
// wrong paths and methods, and model names that try to be paths.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"

	"github.com/louter/louter/internal/testcaddy"
)

const surfaceCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend oai {
			protocol openai_chat
			api_key oai-backend-key
			list_models passthrough
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend anth {
			protocol anthropic
			api_key anth-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend gem {
			protocol gemini
			api_key gem-backend-key
			list_models passthrough
			reverse_proxy 127.0.0.1:{PORT2}
		}
		model claude-* oai gpt-5.5 {
			list claude-sonnet-4-5 claude-opus-4-1
		}
		model gpt-4o anth
		model embed-* oai text-embedding-3-small
		model ge-* gem
		model gem-mock-* gem
		model surf-mock-* oai
		model llama3:8b gem
		model tuned gem tunedModels/mine
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name surf-mock
	}
}
:{PORT2} {
	bind 127.0.0.1
	louter_mock {
		name gem-mock
	}
}
`

// surfaceListed is what every model list holds, in order: the routes'
// literal and listed names, then the backends' own lists (by backend name)
// where the routes send those models to that backend.
var surfaceListed = []string{
	"claude-sonnet-4-5", "claude-opus-4-1", "gpt-4o", "llama3:8b", "tuned",
	"gem-mock-model-a", "gem-mock-model-b", "surf-mock-model-a", "surf-mock-model-b",
}

func startSurfaceEnv(t *testing.T) *env {
	t.Helper()
	return startMockEnv(t, testcaddy.Options{}, surfaceCaddyfile, 2)
}

func TestSurfaceModelLists(t *testing.T) {
	e := startSurfaceEnv(t)
	ctx := context.Background()

	t.Run("openai", func(t *testing.T) {
		e.clearJournals()
		c := openaiClient(e, "")
		var ids []string
		iter := c.Models.ListAutoPaging(ctx)
		for iter.Next() {
			m := iter.Current()
			if m.Object != "model" || m.Created == 0 || m.OwnedBy == "" {
				t.Errorf("model %+v", m)
			}
			ids = append(ids, m.ID)
		}
		if iter.Err() != nil {
			t.Fatal(iter.Err())
		}
		if !slices.Equal(ids, surfaceListed) {
			t.Errorf("listed %q,\nwant %q", ids, surfaceListed)
		}
		// The backends were asked for their lists with their own keys only.
		var asked []string
		for _, r := range e.backendRequests() {
			asked = append(asked, r.Get("method").Str+" "+r.Get("path").Str+"?"+r.Get("query").Str)
			if h := r.Get("headers").Raw; strings.Contains(h, "client-key") {
				t.Errorf("a client credential reached the backend: %s", h)
			}
			switch r.Get("path").Str {
			case "/v1/models":
				if r.Get("headers.Authorization").Str != "Bearer oai-backend-key" {
					t.Errorf("oai list request headers %s", r.Get("headers").Raw)
				}
			case "/v1beta/models":
				if r.Get("headers.X-Goog-Api-Key").Str != "gem-backend-key" {
					t.Errorf("gemini list request headers %s", r.Get("headers").Raw)
				}
			}
		}
		slices.Sort(asked)
		if want := []string{"GET /v1/models?", "GET /v1beta/models?pageSize=1000"}; !slices.Equal(asked, want) {
			t.Errorf("backends asked %q, want %q", asked, want)
		}

		m, err := c.Models.Get(ctx, "claude-3-5-haiku") // matched by a glob, not listed
		if err != nil || m.ID != "claude-3-5-haiku" || m.Object != "model" {
			t.Errorf("get: %+v %v", m, err)
		}
		_, err = c.Models.Get(ctx, "no-such-model")
		var oe *openai.Error
		if !errors.As(err, &oe) || oe.StatusCode != 404 || !strings.Contains(oe.Message, "no-such-model") {
			t.Errorf("unknown model: %v", err)
		}
	})

	t.Run("anthropic", func(t *testing.T) {
		c := anthropicClient(e, "")
		var ids []string
		iter := c.Models.ListAutoPaging(ctx, anthropic.ModelListParams{Limit: anthropic.Int(2)})
		for iter.Next() {
			m := iter.Current()
			if m.DisplayName != m.ID || m.CreatedAt.IsZero() || m.Type != "model" {
				t.Errorf("model %+v", m)
			}
			ids = append(ids, m.ID)
		}
		if iter.Err() != nil {
			t.Fatal(iter.Err())
		}
		if !slices.Equal(ids, surfaceListed) {
			t.Errorf("listed %q,\nwant %q", ids, surfaceListed)
		}
		page, err := c.Models.List(ctx, anthropic.ModelListParams{Limit: anthropic.Int(2), BeforeID: anthropic.String("gpt-4o")})
		if err != nil || len(page.Data) != 2 || page.Data[0].ID != "claude-sonnet-4-5" || page.HasMore || page.FirstID != "claude-sonnet-4-5" {
			t.Errorf("before_id page: %+v %v", page, err)
		}
		m, err := c.Models.Get(ctx, "claude-opus-4-1", anthropic.ModelGetParams{})
		if err != nil || m.ID != "claude-opus-4-1" || m.DisplayName == "" {
			t.Errorf("get: %+v %v", m, err)
		}
		_, err = c.Models.Get(ctx, "no-such-model", anthropic.ModelGetParams{})
		if status, typ := apiErrorOf(t, err); status != 404 || typ != "not_found_error" {
			t.Errorf("unknown model: %d %s", status, typ)
		}
	})

	t.Run("gemini", func(t *testing.T) {
		c := geminiClient(t, e, "")
		page, err := c.Models.List(ctx, &genai.ListModelsConfig{PageSize: 4})
		var ids []string
		for pages := 0; err == nil && pages < 10; pages++ {
			for _, m := range page.Items {
				if !slices.Contains(m.SupportedActions, "generateContent") || !slices.Contains(m.SupportedActions, "countTokens") {
					t.Errorf("model %+v", m)
				}
				ids = append(ids, strings.TrimPrefix(m.Name, "models/"))
			}
			page, err = page.Next(ctx)
		}
		if !errors.Is(err, genai.ErrPageDone) {
			t.Fatal(err)
		}
		if !slices.Equal(ids, surfaceListed) {
			t.Errorf("listed %q,\nwant %q", ids, surfaceListed)
		}
		m, err := c.Models.Get(ctx, "ge-flash", nil)
		if err != nil || m.Name != "models/ge-flash" || !slices.Contains(m.SupportedActions, "streamGenerateContent") {
			t.Errorf("get: %+v %v", m, err)
		}
		_, err = c.Models.Get(ctx, "no-such-model", nil)
		var ae genai.APIError
		if !errors.As(err, &ae) || ae.Code != 404 {
			t.Errorf("unknown model: %v", err)
		}
	})
}

// TestSurfaceWrongPaths checks that API paths and methods louter does not
// serve get 404 or 405 in the API's own error shape, and that other paths
// still reach the next handler.
func TestSurfaceWrongPaths(t *testing.T) {
	e := startSurfaceEnv(t)
	const anthV = "Anthropic-Version"
	tests := []struct {
		method, path string
		headers      []string
		status       int
		allow        string
		shape        string // a gjson condition the body meets
	}{
		{"GET", "/v1/messages", nil, 405, "POST", `type=="error"`},
		{"POST", "/anthropic/v1/messages/batches", []string{anthV, "2023-06-01"}, 404, "", `error.type=="not_found_error"`},
		{"POST", "/v1/message", []string{anthV, "2023-06-01"}, 404, "", `error.type=="not_found_error"`},
		{"GET", "/v1/chat/completions", nil, 405, "POST", `error.type=="invalid_request_error"`},
		{"POST", "/chat/completions", nil, 404, "", `error.message%"*end the client's base URL with /v1*"`},
		{"GET", "/v1/responses/resp_123", nil, 404, "", `error.type=="invalid_request_error"`},
		{"GET", "/v1/embeddings", nil, 405, "POST", `error.message%"*takes POST*"`},
		{"PUT", "/v1/models", nil, 405, "GET, HEAD", `error.message!=""`},
		{"GET", "/v1beta/models/gemini-2.5-pro:generateContent", nil, 405, "POST", `error.status=="INVALID_ARGUMENT"`},
		{"POST", "/v1beta/models/ge-x:embedContent", nil, 404, "", `error.status=="NOT_FOUND"`},
		{"GET", "/v1beta/models/ge-x:generateContent", nil, 405, "POST", `error.code==405`},
		// Not an LLM API's: the next handler (none here: Caddy's empty 200).
		{"GET", "/v1/users", nil, 200, "", ""},
		{"POST", "/v1/message", nil, 200, "", ""},
		{"OPTIONS", "/v1/messages", nil, 200, "", ""},
		{"GET", "/healthz", nil, 200, "", ""},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, e.louter+tt.path, strings.NewReader(`{"model":"gpt-4o"}`))
		for i := 0; i+1 < len(tt.headers); i += 2 {
			req.Header.Set(tt.headers[i], tt.headers[i+1])
		}
		resp, err := testcaddy.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || resp.Header.Get("Allow") != tt.allow {
			t.Errorf("%s %s: %d Allow %q, want %d %q: %s", tt.method, tt.path, resp.StatusCode, resp.Header.Get("Allow"), tt.status, tt.allow, body)
			continue
		}
		if tt.shape == "" {
			if len(body) != 0 {
				t.Errorf("%s %s: louter answered: %s", tt.method, tt.path, body)
			}
			continue
		}
		if resp.Header.Get("Content-Type") != "application/json" || !gjson.Get("["+string(body)+"]", "#("+tt.shape+")").Exists() {
			t.Errorf("%s %s: body %s does not meet %s", tt.method, tt.path, body, tt.shape)
		}
	}

	// The SDK reads the 404 as an error of its own kind.
	ac := anthropicClient(e, "")
	_, err := ac.Messages.Batches.Get(context.Background(), "msgbatch_1", anthropic.MessageBatchGetParams{})
	if status, typ := apiErrorOf(t, err); status != 404 || typ != "not_found_error" {
		t.Errorf("batches: %d %s", status, typ)
	}
}

// TestSurfaceModelNames checks that a model name cannot become a path on a
// Gemini backend, whichever client sent it, and that what the backend gets
// is the name that matched, escaped.
func TestSurfaceModelNames(t *testing.T) {
	e := startSurfaceEnv(t)
	const geminiBody = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	refused := []struct{ name, path string }{
		{"raw ..", "/v1beta/models/ge-flash/../ge-pro:generateContent"},
		{"escaped slash", "/v1beta/models/ge-flash%2F..%2Fge-pro:generateContent"},
		{"escaped dots", "/v1beta/models/%2e%2e:generateContent"},
		{"escaped dots, count", "/v1beta/models/ge-%2e%2e:countTokens"},
		{"control character", "/v1beta/models/ge-a%0Ab:streamGenerateContent?alt=sse"},
	}
	for _, tt := range refused {
		e.clearJournals()
		resp := post(t, e.louter+tt.path, geminiBody)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 400 || gjson.GetBytes(body, "error.status").Str != "INVALID_ARGUMENT" || !strings.Contains(gjson.GetBytes(body, "error.message").Str, "model name") {
			t.Errorf("%s: %d %s", tt.name, resp.StatusCode, body)
		}
		if n := len(e.backendRequests()); n != 0 {
			t.Errorf("%s: the backend got %d requests", tt.name, n)
		}
	}

	// The same name in a body, bound for a Gemini backend's URL.
	e.clearJournals()
	_, err := callAnthropic(e, "ge-flash/../ge-pro", "", false)
	if status, typ := apiErrorOf(t, err); status != 400 || typ != "invalid_request_error" {
		t.Errorf("anthropic client: %d %s", status, typ)
	}
	_, err = callOpenAI(e, "ge-flash/../ge-pro", "", true)
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Param != "model" {
		t.Errorf("openai client: %v", err)
	}
	if n := len(e.backendRequests()); n != 0 {
		t.Errorf("the backend got %d requests", n)
	}

	// Names that are fine reach the backend escaped, as they matched.
	accepted := []struct {
		name, send        string // send: the model path segment or body model
		gemini            bool   // sent by a Gemini client (path) or an Anthropic one (body)
		wantPath, wantRaw string
	}{
		{"colon in a name", "llama3:8b", false, "/v1beta/models/llama3:8b:generateContent", "/v1beta/models/llama3%3A8b:generateContent"},
		{"colon in a path name", "llama3:8b", true, "/v1beta/models/llama3:8b:generateContent", "/v1beta/models/llama3%3A8b:generateContent"},
		{"escaped letter", "ge-%66lash", true, "/v1beta/models/ge-flash:generateContent", ""},
		{"space", "ge-a%20b", true, "/v1beta/models/ge-a b:generateContent", ""}, // sent as %20, Go's own escaping: no raw path
		{"rename with a slash", "tuned", false, "/v1beta/models/tunedModels/mine:generateContent", ""},
	}
	for _, tt := range accepted {
		e.clearJournals()
		if tt.gemini {
			resp := post(t, e.louter+"/v1beta/models/"+tt.send+":generateContent", geminiBody)
			if body, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 {
				t.Errorf("%s: %d %s", tt.name, resp.StatusCode, body)
				continue
			}
		} else if _, err := callAnthropic(e, tt.send, "", false); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		got := e.onlyBackendRequest()
		if got.Get("path").Str != tt.wantPath || got.Get("raw_path").Str != tt.wantRaw {
			t.Errorf("%s: backend got path %q raw %q, want %q %q", tt.name, got.Get("path").Str, got.Get("raw_path").Str, tt.wantPath, tt.wantRaw)
		}
	}
}

// TestSurfaceOpenAIPassthrough sends embeddings and completions with the
// OpenAI SDK: routed by model, renamed, keyed with the backend's key, and
// answered as the backend answered.
func TestSurfaceOpenAIPassthrough(t *testing.T) {
	e := startSurfaceEnv(t)
	ctx := context.Background()
	c := openaiClient(e, "")

	e.clearJournals()
	emb, err := c.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: "embed-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"ab", "abcd"}},
	})
	if err != nil || len(emb.Data) != 2 || emb.Data[1].Index != 1 || len(emb.Data[0].Embedding) != 3 || emb.Model != "text-embedding-3-small" {
		t.Fatalf("embeddings: %+v %v", emb, err)
	}
	got := e.onlyBackendRequest()
	if got.Get("path").Str != "/v1/embeddings" || got.Get("body.model").Str != "text-embedding-3-small" ||
		got.Get("headers.Authorization").Str != "Bearer oai-backend-key" {
		t.Errorf("backend got %s", got.Raw)
	}

	e.clearJournals()
	comp, err := c.Completions.New(ctx, openai.CompletionNewParams{
		Model:  "surf-mock-coder",
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("def add(a, b):")},
		Suffix: openai.String("return s"),
	})
	if err != nil || len(comp.Choices) != 1 || comp.Choices[0].Text != `completion of "def add(a, b):" before "return s"` {
		t.Fatalf("completions: %+v %v", comp, err)
	}
	if got := e.onlyBackendRequest(); got.Get("path").Str != "/v1/completions" {
		t.Errorf("backend got %s", got.Raw)
	}

	st := c.Completions.NewStreaming(ctx, openai.CompletionNewParams{
		Model:  "surf-mock-coder",
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("x")},
	})
	var text strings.Builder
	chunks := 0
	for st.Next() {
		chunks++
		for _, ch := range st.Current().Choices {
			text.WriteString(ch.Text)
		}
	}
	if st.Err() != nil || chunks != 2 || text.String() != `completion of "x" before ""` {
		t.Errorf("streamed completion: %d chunks %q %v", chunks, text.String(), st.Err())
	}

	// A model whose backend does not speak OpenAI Chat.
	e.clearJournals()
	_, err = c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "gpt-4o", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("x")}})
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Param != "model" || !strings.Contains(oe.Message, "openai_chat") {
		t.Errorf("anthropic-routed embeddings: %v", err)
	}
	_, err = c.Completions.New(ctx, openai.CompletionNewParams{Model: "no-route", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("x")}})
	if !errors.As(err, &oe) || oe.StatusCode != 404 {
		t.Errorf("unrouted completion: %v", err)
	}
	if n := len(e.backendRequests()); n != 0 {
		t.Errorf("the backend got %d requests", n)
	}
}
