package caddymodule_test

// Today's Claude Code (2.1.265 and later) through a real Caddy on every
// backend kind: its tool schemas with the regex keyword strict validators
// refuse, its advisor_20260301 server tool, its mid-conversation system
// message, ids of Anthropic's shape, and the 400 Anthropic gives a request
// without max_tokens.

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

const claudeCodeCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend anth {
			protocol anthropic
			api_key anth-backend-key
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
			api_key gem-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend bed {
			protocol bedrock
			api_key cc-bedrock-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model claude-anth* anth
		model claude-oai* oai
		model claude-resp* resp
		model claude-gem* gem gemini-2.5-flash
		model claude-bed* bed anthropic.claude-haiku-4-5-20251001-v1:0
	}
}
` + `:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name cc
		chunk_delay 0
		bedrock_api_key cc-bedrock-key
	}
}
:{PORT2} {
	bind 127.0.0.1
	metrics
}
`

// claudeCodeToday is a request as Claude Code 2.1.275 sends it: the
// Artifact tool's name pattern (a lookahead and Unicode property escapes,
// which OpenAI's schema validator refuses), the advisor server tool, and a
// mid-conversation system message. %MODEL%, %STREAM% and %TOOLS% are
// filled in.
const claudeCodeToday = `{"model":"%MODEL%","max_tokens":32000,"stream":%STREAM%,
	"system":[{"type":"text","text":"You are Claude Code."}],
	"tools":[{"name":"Artifact","description":"Save an artifact.","input_schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
		"properties":{"name":{"type":"string","pattern":"^(?!__.*__$)[^\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\"\\\\./[\\]]{1,200}$"},"size":{"type":"integer","exclusiveMinimum":0}},
		"required":["name"],"additionalProperties":false}}%TOOLS%],
	"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},
		{"role":"system","content":[{"type":"text","text":"The user switched to plan mode."}]},
		{"role":"user","content":"go on"}]}`

// advisorTool is Claude Code's advisor server tool (beta
// advisor-tool-2026-03-01).
const advisorTool = `,{"type":"advisor_20260301","name":"advisor","model":"claude-opus-4-7"}`

func claudeCodeBody(model string, stream, advisor bool) string {
	tools := ""
	if advisor {
		tools = advisorTool
	}
	s := "false"
	if stream {
		s = "true"
	}
	return strings.NewReplacer("%MODEL%", model, "%STREAM%", s, "%TOOLS%", tools).Replace(claudeCodeToday)
}

// TestClaudeCodeTodayEveryBackend: the request is served on every backend
// kind louter_mock serves (bedrock_converse, which it does not, is
// translate's TestMidConversationSystem's), streaming and not, answered as Anthropic would (a msg_ id
// whatever the backend's), and the advisor tool is dropped and counted
// where the backend cannot run it, kept for Anthropic.
func TestClaudeCodeTodayEveryBackend(t *testing.T) {
	ports := testcaddy.Start(t, claudeCodeCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	testcaddy.WaitListening(t, ports[2])
	e := &agentsEnv{testcaddy.URL(ports[0]), testcaddy.URL(ports[1]), testcaddy.URL(ports[2])}
	headers := []string{"anthropic-version", "2023-06-01", "anthropic-beta", "claude-code-20250219,advisor-tool-2026-03-01,mid-conversation-system-2026-04-07"}
	for _, tt := range []struct {
		backend, model string
		keeps          bool   // the backend gets the advisor tool
		system         string // where the backend request has the mid-conversation system text
	}{
		{"anth", "claude-anth-1", true, "messages.2.content.0.text"},
		{"oai", "claude-oai-1", false, "messages.3.content"},
		{"resp", "claude-resp-1", false, "input.2.content.0.text"},
		{"gem", "claude-gem-1", false, "contents.2.parts.0.text"},
		{"bed", "claude-bed-1", false, "system.1.text"},
	} {
		for _, stream := range []bool{false, true} {
			resp, answer, got := e.exchange(t, "/v1/messages", claudeCodeBody(tt.model, stream, true), headers...)
			if resp.StatusCode != 200 {
				t.Fatalf("%s stream=%v: %d %s", tt.backend, stream, resp.StatusCode, answer)
			}
			id := gjson.Get(answer, "id").Str
			if stream {
				id = gjson.Get(sseData(answer, "message_start"), "message.id").Str
			}
			if !strings.HasPrefix(id, "msg_") {
				t.Errorf("%s stream=%v: message id %q, want msg_…", tt.backend, stream, id)
			}
			body := got.Get("body").Raw
			if has := strings.Contains(body, "advisor_20260301"); has != tt.keeps {
				t.Errorf("%s: advisor tool in the backend request: %v, want %v: %s", tt.backend, has, tt.keeps, body)
			}
			if !strings.Contains(body, "Artifact") {
				t.Errorf("%s: the Artifact tool is missing: %s", tt.backend, body)
			}
			if s := got.Get("body").Get(tt.system).Str; !strings.Contains(s, "The user switched to plan mode.") {
				t.Errorf("%s: %s = %q, want the mid-conversation system text: %s", tt.backend, tt.system, s, body)
			}
		}
		if tt.keeps {
			continue
		}
		without := e.dropDelta(t, tt.backend, claudeCodeBody(tt.model, false, false), headers[2:]...)
		with := e.dropDelta(t, tt.backend, claudeCodeBody(tt.model, false, true), headers[2:]...)
		if with != without+1 {
			t.Errorf("%s: louter_dropped_fields_total counted %v without the advisor tool, %v with it; want one more", tt.backend, without, with)
		}
	}
}

// sseData returns the data of the first event named name in an SSE body.
func sseData(body, name string) string {
	_, rest, ok := strings.Cut(body, "event: "+name+"\n")
	if !ok {
		return ""
	}
	_, data, _ := strings.Cut(rest, "data: ")
	data, _, _ = strings.Cut(data, "\n")
	return data
}

// TestClaudeCodeMaxTokensRequired: a Messages request without max_tokens
// gets Anthropic's own 400 whatever the backend, before any backend is
// asked; count_tokens, which takes none, is served.
func TestClaudeCodeMaxTokensRequired(t *testing.T) {
	ports := testcaddy.Start(t, claudeCodeCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	e := &agentsEnv{testcaddy.URL(ports[0]), testcaddy.URL(ports[1]), ""}
	for _, model := range []string{"claude-anth-1", "claude-oai-1", "claude-gem-1"} {
		resp, answer, got := e.exchange(t, "/v1/messages", `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`, "anthropic-version", "2023-06-01")
		if resp.StatusCode != 400 || gjson.Get(answer, "type").Str != "error" ||
			gjson.Get(answer, "error.type").Str != "invalid_request_error" || gjson.Get(answer, "error.message").Str != "max_tokens: Field required" {
			t.Errorf("%s: %d %s, want 400 invalid_request_error max_tokens: Field required", model, resp.StatusCode, answer)
		}
		if got.Exists() {
			t.Errorf("%s: the backend was asked: %s", model, got.Raw)
		}
	}
	resp, answer, _ := e.exchange(t, "/v1/messages/count_tokens", `{"model":"claude-oai-1","messages":[{"role":"user","content":"hi"}]}`, "anthropic-version", "2023-06-01")
	if resp.StatusCode != 200 || !gjson.Get(answer, "input_tokens").Exists() {
		t.Errorf("count_tokens without max_tokens: %d %s", resp.StatusCode, answer)
	}
}
