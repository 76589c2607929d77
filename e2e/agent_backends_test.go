package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// The agent tests share what is below: a louter site in front of the
// mock, how each backend protocol's body carries tools and tool results,
// and the backend-side checks of a turn.

// backendWire is how a backend protocol's request body carries what the
// agent tests look for.
type backendWire struct {
	// toolResult reports whether a tool result holds text.
	toolResult func(body gjson.Result, text string) bool
	// tool returns the declaration of the named tool, with its JSON
	// schema at the schema path; a result that does not exist if none.
	tool   func(body gjson.Result, name string) gjson.Result
	schema string
	// call is a member only a model's tool call writes.
	call string
}

// backendWires are the backend protocols' bodies, by protocol.
var backendWires = map[string]backendWire{
	"openai_chat": {
		toolResult: func(body gjson.Result, text string) bool {
			return anyOf(body.Get("messages"), func(m gjson.Result) bool {
				return m.Get("role").Str == "tool" && strings.Contains(m.Get("content").Raw, text)
			})
		},
		tool:   declaredBy("tools.#(function.name==%q)"),
		schema: "function.parameters",
		call:   `"tool_calls"`,
	},
	"anthropic": {
		toolResult: anthropicToolResultWith,
		tool:       declaredBy("tools.#(name==%q)"),
		schema:     "input_schema",
		call:       `"tool_use"`,
	},
	"gemini": {
		toolResult: func(body gjson.Result, text string) bool {
			return anyOf(body.Get("contents.#.parts|@flatten"), func(p gjson.Result) bool {
				return strings.Contains(p.Get("functionResponse.response.output").Str, text)
			})
		},
		tool:   declaredBy("tools.#.functionDeclarations|@flatten|#(name==%q)"),
		schema: "parametersJsonSchema",
		call:   `"functionCall"`,
	},
	"openai_responses": {
		toolResult: func(body gjson.Result, text string) bool {
			return anyOf(body.Get("input"), func(it gjson.Result) bool {
				return it.Get("type").Str == "function_call_output" && strings.Contains(it.Get("output").Raw, text)
			})
		},
		tool:   declaredBy("tools.#(name==%q)"),
		schema: "parameters",
		call:   `"function_call"`,
	},
}

// declaredBy returns a tool lookup by a gjson path with the name's place
// as %q.
func declaredBy(path string) func(body gjson.Result, name string) gjson.Result {
	return func(body gjson.Result, name string) gjson.Result { return body.Get(fmt.Sprintf(path, name)) }
}

// anyOf reports whether f holds for an element of the array a.
func anyOf(a gjson.Result, f func(gjson.Result) bool) bool {
	found := false
	a.ForEach(func(_, e gjson.Result) bool {
		found = f(e)
		return !found
	})
	return found
}

// chatToolResult finds the command's output in an OpenAI Chat body, as a
// tool message.
func chatToolResult(body gjson.Result) bool {
	return backendWires["openai_chat"].toolResult(body, "louter-ok")
}

// anthropicToolResult finds the command's output in an Anthropic Messages
// body (also Bedrock's InvokeModel body).
func anthropicToolResult(body gjson.Result) bool { return anthropicToolResultWith(body, "louter-ok") }

// anthropicToolResultWith reports whether an Anthropic Messages body has
// a tool_result containing text.
func anthropicToolResultWith(body gjson.Result, text string) bool {
	return anyOf(body.Get("messages.#.content|@flatten"), func(b gjson.Result) bool {
		return b.Get("type").Str == "tool_result" && strings.Contains(b.Get("content").Raw, text)
	})
}

// startAgentSite starts louter with one backend of the given protocol in
// front of the mock (the agent scenario: asked to run a quoted command, it
// calls the agent's shell tool, then reports the output), and returns
// louter's URL and the mock's port. name keeps each test's mock journal
// apart; extra are more lines for the louter block (a client key table).
func startAgentSite(t *testing.T, protocol, name string, extra ...string) (string, int) {
	t.Helper()
	ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		`+strings.Join(extra, "\n\t\t")+`
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
		sawResult = sawResult || backendWires[protocol].toolResult(req.Get("body"), "louter-ok")
	}
	if !sawResult {
		t.Fatalf("no backend request carried the command's output as a tool result:\n%s", journal[len(journal)-1].Raw)
	}
	return journal
}

// sessionCacheKey is the prompt_cache_key louter gives a translated
// request whose conversation key is the agent's session id, with no
// client keys configured (caddymodule/cache_key.go).
func sessionCacheKey(session string) string { return clientCacheKey("", "session:"+session) }

// clientCacheKey is the prompt_cache_key louter gives a translated request
// of the named client (none: "") whose conversation key is conv.
func clientCacheKey(client, conv string) string {
	sum := sha256.Sum256([]byte(client + "\x00" + conv))
	return "louter-" + hex.EncodeToString(sum[:16])
}
