package caddymodule_test

// Token counting through a real Caddy with the official SDKs: Anthropic's
// Messages.CountTokens and genai's Models.CountTokens against a backend of
// every protocol. The mock counts CountBase plus the number of messages, so
// a count at or above CountBase was asked of the backend and one below it
// was made by louter.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"

	"github.com/louter/louter/caddymodule/mock"
	"github.com/louter/louter/internal/testcaddy"
)

const tokensCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend anth {
			protocol anthropic
			api_key anth-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend gem {
			protocol gemini
			api_key gem-backend-key
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
		backend dead {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT2}
		}
		model count-anth anth backend-anth
		model count-gem gem backend-gem
		model count-oai oai
		model count-resp resp
		model count-dead dead
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name mock-count
	}
}
`

func startTokensEnv(t *testing.T) *env {
	t.Helper()
	ports := testcaddy.Start(t, tokensCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	return &env{t: t, louter: testcaddy.URL(ports[0]), mocks: []string{testcaddy.URL(ports[1])}}
}

// countBackends is what each route's count must look like: asked of the
// backend (and at which path), or made locally.
var countBackends = []struct {
	model     string
	asked     bool
	path      string // the backend's counting path, when asked
	protoSeen string // the journal's protocol, when asked
}{
	{"count-anth", true, "/v1/messages/count_tokens", "anthropic"},
	{"count-gem", true, "/v1beta/models/backend-gem:countTokens", "gemini"},
	{"count-oai", false, "", ""},
	{"count-resp", false, "", ""},
	{"count-dead", false, "", ""},
}

func checkCount(t *testing.T, e *env, n int64, asked bool, msgs int, path, proto string) {
	t.Helper()
	reqs := e.backendRequests()
	if !asked {
		if n <= 0 || n >= mock.CountBase {
			t.Errorf("count %d, want a local count (0 < n < %d)", n, mock.CountBase)
		}
		if len(reqs) != 0 {
			t.Errorf("a backend without a counting endpoint was sent %d requests: %s", len(reqs), reqs[0].Raw)
		}
		return
	}
	if n != int64(mock.CountBase+msgs) {
		t.Errorf("count %d, want the backend's %d", n, mock.CountBase+msgs)
	}
	if len(reqs) != 1 {
		t.Fatalf("backend saw %d requests, want 1", len(reqs))
	}
	got := reqs[0]
	if got.Get("path").Str != path || got.Get("protocol").Str != proto {
		t.Errorf("backend asked at %s (%s), want %s (%s)", got.Get("path").Str, got.Get("protocol").Str, path, proto)
	}
	if h := got.Get("headers").Raw; strings.Contains(h, "client-key") {
		t.Errorf("the client's key reached the backend: %s", h)
	}
}

func TestCountTokensAnthropicClient(t *testing.T) {
	e := startTokensEnv(t)
	msgs := []anthropic.MessageParam{
		anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather in Paris? Please answer in one sentence.")),
		anthropic.NewAssistantMessage(anthropic.NewTextBlock("Sunny, 24 °C.")),
		anthropic.NewUserMessage(anthropic.NewTextBlock("And tomorrow?")),
	}
	p := anthropicParams("x", msgs...)
	for _, tt := range countBackends {
		t.Run(tt.model, func(t *testing.T) {
			e.clearJournals()
			client := anthropicClient(e, "")
			res, err := client.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{
				Model:    anthropic.Model(tt.model),
				Messages: msgs,
				System:   anthropic.MessageCountTokensParamsSystemUnion{OfTextBlockArray: []anthropic.TextBlockParam{{Text: "You are a weather bot."}}},
				Tools:    []anthropic.MessageCountTokensToolUnionParam{{OfTool: p.Tools[0].OfTool}},
			})
			if err != nil {
				t.Fatal(err)
			}
			checkCount(t, e, res.InputTokens, tt.asked, len(msgs), tt.path, tt.protoSeen)
		})
	}
	t.Run("beta, with the query kept", func(t *testing.T) {
		e.clearJournals()
		client := anthropicClient(e, "")
		res, err := client.Beta.Messages.CountTokens(context.Background(), anthropic.BetaMessageCountTokensParams{
			Model:    "count-anth",
			Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("hi"))},
		})
		if err != nil {
			t.Fatal(err)
		}
		checkCount(t, e, res.InputTokens, true, 1, "/v1/messages/count_tokens", "anthropic")
		got := e.backendRequests()[0]
		if got.Get("query").Str != "beta=true" || got.Get("body.model").Str != "backend-anth" {
			t.Errorf("passthrough lost the query or the rename: %s", got.Raw)
		}
	})
	t.Run("translated for Gemini, whole request", func(t *testing.T) {
		e.clearJournals()
		client := anthropicClient(e, "")
		if _, err := client.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{
			Model:    "count-gem",
			Messages: msgs,
			System:   anthropic.MessageCountTokensParamsSystemUnion{OfTextBlockArray: []anthropic.TextBlockParam{{Text: "You are a weather bot."}}},
		}); err != nil {
			t.Fatal(err)
		}
		got := e.backendRequests()[0]
		if !strings.Contains(got.Get("body.generateContentRequest.systemInstruction").Raw, "weather bot") {
			t.Errorf("the system prompt was not sent to be counted: %s", got.Get("body").Raw)
		}
	})
}

func TestCountTokensGeminiClient(t *testing.T) {
	e := startTokensEnv(t)
	contents := []*genai.Content{
		genai.NewContentFromText("What is the weather in Paris?", genai.RoleUser),
		genai.NewContentFromText("Sunny.", genai.RoleModel),
		genai.NewContentFromText("And tomorrow?", genai.RoleUser),
	}
	for _, tt := range countBackends {
		t.Run(tt.model, func(t *testing.T) {
			e.clearJournals()
			res, err := geminiClient(t, e, "").Models.CountTokens(context.Background(), tt.model, contents, nil)
			if err != nil {
				t.Fatal(err)
			}
			path, proto := tt.path, tt.protoSeen
			checkCount(t, e, int64(res.TotalTokens), tt.asked, len(contents), path, proto)
		})
	}
}

// TestCountTokensErrors checks that a counting call louter cannot serve
// gets an error in the client's protocol.
func TestCountTokensErrors(t *testing.T) {
	e := startTokensEnv(t)
	tests := []struct {
		name, path, body string
		status           int
		want             string // a gjson path that must exist in the error
	}{
		{"anthropic bad JSON", "/v1/messages/count_tokens", `{"model":`, 400, `error.type`},
		{"anthropic no model", "/anthropic/v1/messages/count_tokens?beta=true", `{"messages":[]}`, 400, `error.type`},
		{"anthropic unknown model", "/v1/messages/count_tokens", `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`, 404, `error.type`},
		{"anthropic bad messages", "/v1/messages/count_tokens", `{"model":"count-oai","messages":"hi"}`, 400, `error.type`},
		{"gemini bad JSON", "/v1beta/models/count-gem:countTokens", `{`, 400, `error.status`},
		{"gemini unknown model", "/v1beta/models/nope:countTokens", `{"contents":[]}`, 404, `error.status`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, e.louter+tt.path, tt.body)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !gjson.GetBytes(body, tt.want).Exists() {
				t.Errorf("%d %s, want %d with %s", resp.StatusCode, body, tt.status, tt.want)
			}
		})
	}
	// Through the SDKs: the errors are ones they understand.
	ac := anthropicClient(e, "")
	_, err := ac.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{
		Model: "nope", Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	var ae *anthropic.Error
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound {
		t.Errorf("Anthropic SDK, unknown model: %v", err)
	}
	_, err = geminiClient(t, e, "").Models.CountTokens(context.Background(), "nope", []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}, nil)
	var ge genai.APIError
	if !errors.As(err, &ge) || ge.Code != http.StatusNotFound {
		t.Errorf("genai, unknown model: %v", err)
	}
}

// TestCountTokensGeminiWholeRequest checks Gemini's other body form: a whole
// generateContent request, whose system instruction and tools count too,
// and which a Gemini backend receives as it was sent.
func TestCountTokensGeminiWholeRequest(t *testing.T) {
	e := startTokensEnv(t)
	contents := `{"contents":[{"role":"user","parts":[{"text":"What is the weather in Paris?"}]}]}`
	whole := `{"generateContentRequest":{"model":"models/count-oai",` +
		`"systemInstruction":{"parts":[{"text":"You are a meteorologist who answers in verse, citing the forecast's sources."}]},` +
		`"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Get the weather for a city",` +
		`"parametersJsonSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}],` +
		`"contents":[{"role":"user","parts":[{"text":"What is the weather in Paris?"}]}]}}`
	count := func(model, body string) int64 {
		t.Helper()
		resp := post(t, e.louter+"/v1beta/models/"+model+":countTokens", body)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		return gjson.GetBytes(b, "totalTokens").Int()
	}
	if small, big := count("count-oai", contents), count("count-oai", whole); small <= 0 || big <= small+20 {
		t.Errorf("local count: contents alone %d, with system instruction and tools %d: want the latter well above", small, big)
	}
	e.clearJournals()
	if n := count("count-gem", strings.Replace(whole, "models/count-oai", "models/count-gem", 1)); n != mock.CountBase+1 {
		t.Errorf("Gemini backend count %d, want %d", n, mock.CountBase+1)
	}
	if got := e.backendRequests(); len(got) != 1 || !got[0].Get("body.generateContentRequest.systemInstruction").Exists() ||
		got[0].Get("body.generateContentRequest.model").Str != "models/backend-gem" {
		t.Errorf("the Gemini backend did not receive the whole request: %v", got)
	}
}
