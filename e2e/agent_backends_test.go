package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// The agents that speak one protocol and are checked on all four
// backends (opencode, qwen-code) share what is below: a louter site in
// front of the mock, and how each backend protocol carries the shell
// command's output back to the model.

// backendToolResults finds the command's output ("louter-ok") as a tool
// result in a backend request body, per backend protocol.
var backendToolResults = map[string]func(body gjson.Result) bool{
	"openai_chat":      chatToolResult,
	"anthropic":        anthropicToolResult,
	"gemini":           geminiToolResult,
	"openai_responses": responsesToolResult,
}

// chatToolResult finds the command's output in an OpenAI Chat body, as a
// tool message.
func chatToolResult(body gjson.Result) bool {
	found := false
	body.Get("messages").ForEach(func(_, m gjson.Result) bool {
		found = m.Get("role").Str == "tool" && strings.Contains(m.Get("content").Raw, "louter-ok")
		return !found
	})
	return found
}

// anthropicToolResult finds the command's output in an Anthropic Messages
// body (also Bedrock's InvokeModel body).
func anthropicToolResult(body gjson.Result) bool {
	found := false
	body.Get("messages").ForEach(func(_, m gjson.Result) bool {
		m.Get("content").ForEach(func(_, b gjson.Result) bool {
			found = b.Get("type").Str == "tool_result" && strings.Contains(b.Get("content").Raw, "louter-ok")
			return !found
		})
		return !found
	})
	return found
}

// geminiToolResult finds the command's output in a Gemini body, as a
// functionResponse's output.
func geminiToolResult(body gjson.Result) bool {
	found := false
	body.Get("contents").ForEach(func(_, c gjson.Result) bool {
		c.Get("parts").ForEach(func(_, p gjson.Result) bool {
			found = strings.Contains(p.Get("functionResponse.response.output").Str, "louter-ok")
			return !found
		})
		return !found
	})
	return found
}

// responsesToolResult finds the command's output in a Responses body, as
// a function_call_output item.
func responsesToolResult(body gjson.Result) bool {
	found := false
	body.Get("input").ForEach(func(_, it gjson.Result) bool {
		found = it.Get("type").Str == "function_call_output" && strings.Contains(it.Get("output").Raw, "louter-ok")
		return !found
	})
	return found
}

// startAgentSite starts louter with one backend of the given protocol in
// front of the mock (the agent scenario: asked to run a quoted command, it
// calls the agent's shell tool, then reports the output), and returns
// louter's URL and the mock's port. name keeps each test's mock journal
// apart.
func startAgentSite(t *testing.T, protocol, name string) (string, int) {
	t.Helper()
	ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend mock {
			protocol `+protocol+`
			api_key backend-secret
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model * mock
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name `+name+`
	}
}
`)
	return testcaddy.URL(ports[0]), ports[1]
}

// checkBackendTurn checks the backend's side of an agent's turn: every
// request in the backend's protocol, with the backend's key and never the
// client's, and one carrying the command's output as a tool result. It
// returns the requests.
func checkBackendTurn(t *testing.T, mockPort int, protocol, clientKey string) []gjson.Result {
	t.Helper()
	journal := mockJournal(t, mockPort).Array()
	if len(journal) < 2 {
		t.Fatalf("backend saw %d requests, want at least 2", len(journal))
	}
	sawResult := false
	for _, req := range journal {
		if p := req.Get("protocol").Str; p != protocol {
			t.Errorf("backend request in protocol %q, want %s", p, protocol)
		}
		if h := req.Get("headers").Raw; strings.Contains(h, clientKey) || !strings.Contains(h, "backend-secret") {
			t.Errorf("backend request without the backend's key, or with the client's: %s", h)
		}
		sawResult = sawResult || backendToolResults[protocol](req.Get("body"))
	}
	if !sawResult {
		t.Fatalf("no backend request carried the command's output as a tool result:\n%s", journal[len(journal)-1].Raw)
	}
	return journal
}

// sessionCacheKey is the prompt_cache_key louter gives a translated
// request whose conversation key is the agent's session id, with no
// client keys configured (caddymodule/cache_key.go).
func sessionCacheKey(session string) string {
	sum := sha256.Sum256([]byte("\x00session:" + session))
	return "louter-" + hex.EncodeToString(sum[:16])
}
