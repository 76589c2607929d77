package mock

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

func TestScenarios(t *testing.T) {
	type check func(t *testing.T, m *Mock, pc protocolCase, d decoded, streamed bool)
	tests := []struct {
		scenario string
		userText string
		tools    []testTool
		check    check
	}{
		{"text", "hi", nil, func(t *testing.T, m *Mock, pc protocolCase, d decoded, streamed bool) {
			want := "Hello from louter_mock (" + m.Name + ")."
			if got := partsText(d.resp, translate.PartText); got != want {
				t.Errorf("text %q, want %q", got, want)
			}
			if d.resp.StopReason != translate.StopEndTurn || len(toolCalls(d.resp)) != 0 {
				t.Errorf("stop %q, %d tool calls", d.resp.StopReason, len(toolCalls(d.resp)))
			}
			if n := countDeltas(d.events, translate.BlockText); streamed && n != 4 {
				t.Errorf("%d text deltas, want one per word (4)", n)
			}
		}},
		{"echo", "please echo <this> back", nil, func(t *testing.T, m *Mock, pc protocolCase, d decoded, streamed bool) {
			if got := partsText(d.resp, translate.PartText); got != "please echo <this> back" {
				t.Errorf("echo %q", got)
			}
		}},
		{"tool", "weather?", []testTool{weatherTool, timeTool}, func(t *testing.T, m *Mock, pc protocolCase, d decoded, streamed bool) {
			calls := toolCalls(d.resp)
			if len(calls) != 1 || calls[0].Name != "get_weather" || d.resp.StopReason != translate.StopToolUse {
				t.Fatalf("calls %+v, stop %q", calls, d.resp.StopReason)
			}
			if want := `{"city":"louter","days":1,"metric":true}`; calls[0].Arguments != want {
				t.Errorf("arguments %s, want %s", calls[0].Arguments, want)
			}
			if spec := protocolForPath(pc.path); !strings.HasPrefix(calls[0].ID, spec.toolCallIDPrefix) {
				t.Errorf("tool call id %q lacks %q", calls[0].ID, spec.toolCallIDPrefix)
			}
			if n := countDeltas(d.events, translate.BlockToolCall); streamed && n < 2 {
				t.Errorf("arguments streamed in %d fragments, want several", n)
			}
		}},
		{"parallel_tools", "weather and time?", []testTool{weatherTool, timeTool}, func(t *testing.T, m *Mock, pc protocolCase, d decoded, streamed bool) {
			calls := toolCalls(d.resp)
			if len(calls) != 2 || calls[0].Name != "get_weather" || calls[1].Name != "get_time" || d.resp.StopReason != translate.StopToolUse {
				t.Fatalf("calls %+v, stop %q", calls, d.resp.StopReason)
			}
			if calls[1].Arguments != "{}" || calls[0].ID == calls[1].ID {
				t.Errorf("second call %+v (first id %q)", calls[1], calls[0].ID)
			}
		}},
		{"parallel_tools", "time twice", []testTool{timeTool}, func(t *testing.T, m *Mock, pc protocolCase, d decoded, streamed bool) {
			calls := toolCalls(d.resp)
			if len(calls) != 2 || calls[0].Name != "get_time" || calls[1].Name != "get_time" {
				t.Fatalf("calls %+v", calls)
			}
		}},
		{"reasoning", "think", nil, func(t *testing.T, m *Mock, pc protocolCase, d decoded, streamed bool) {
			if got := partsText(d.resp, translate.PartThinking); got != "Let me think about this." {
				t.Errorf("thinking %q", got)
			}
			if got := partsText(d.resp, translate.PartText); !strings.HasPrefix(got, "Hello from louter_mock") {
				t.Errorf("text %q", got)
			}
			if d.resp.Parts[0].Type != translate.PartThinking {
				t.Errorf("thinking is not first: %+v", d.resp.Parts)
			}
			if pc.protocol == translate.ProtocolAnthropic && !strings.HasPrefix(d.resp.Parts[0].Signature, "mock-signature-") {
				t.Errorf("anthropic thinking signature %q", d.resp.Parts[0].Signature)
			}
			if u := d.resp.Usage; pc.protocol == translate.ProtocolOpenAIChat && (u.ReasoningTokens <= 0 || u.ReasoningTokens >= u.OutputTokens) {
				t.Errorf("usage %+v, want reasoning tokens within the output", u)
			}
			if n := countDeltas(d.events, translate.BlockThinking); streamed && n < 2 {
				t.Errorf("thinking streamed in %d deltas, want several", n)
			}
		}},
		{"long", "go on", nil, func(t *testing.T, m *Mock, pc protocolCase, d decoded, streamed bool) {
			text := partsText(d.resp, translate.PartText)
			if !strings.HasPrefix(text, "word1 word2 ") || !strings.HasSuffix(text, "word200 ") {
				t.Errorf("long text %q", text)
			}
			if n := countDeltas(d.events, translate.BlockText); streamed && n != longDeltas {
				t.Errorf("%d text deltas, want %d", n, longDeltas)
			}
		}},
	}
	for _, pc := range protocolCases {
		for _, tt := range tests {
			for _, streamed := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/%d-tools/stream=%v", pc.protocol, tt.scenario, len(tt.tools), streamed), func(t *testing.T) {
					m := newMock(t, nil)
					body := pc.body(streamed, tt.userText, "", tt.tools)
					w := serve(t, m, newRequest(http.MethodPost, pc.path, body, ScenarioHeader, tt.scenario))
					if w.Code != http.StatusOK {
						t.Fatalf("status %d: %s", w.Code, w.Body)
					}
					if got := w.Header().Get(BackendHeader); got != m.Name {
						t.Errorf("%s = %q", BackendHeader, got)
					}
					wantCT := "application/json"
					if streamed {
						wantCT = "text/event-stream"
					}
					if ct := w.Header().Get("Content-Type"); ct != wantCT {
						t.Errorf("Content-Type %q, want %q", ct, wantCT)
					}
					d := decodeBody(t, pc.protocol, w, false)
					if d.err != nil {
						t.Fatalf("stream ended with %v\n%s", d.err, w.Body)
					}
					tt.check(t, m, pc, d, streamed)
					if want := gjson.Get(body, "model").String(); d.resp.Model != want {
						t.Errorf("model %q, want the request's %q", d.resp.Model, want)
					}
					if d.resp.Usage.InputTokens != len(body)/4 || d.resp.Usage.OutputTokens <= 0 {
						t.Errorf("usage %+v, want input %d and some output", d.resp.Usage, len(body)/4)
					}
				})
			}
		}
	}
}

func TestAgentScenario(t *testing.T) {
	tests := []struct {
		name       string
		userText   string
		toolResult string
		tools      []testTool
		wantText   string // "" when a tool call is expected
		wantTool   string
		wantArgs   string
	}{
		{"tool result", `Run "echo louter-ok"`, "louter-ok\n", []testTool{bashTool}, "The command printed: louter-ok", "", ""},
		{"bash", `Run the shell command "echo louter-ok" and tell me its output.`, "", []testTool{weatherTool, bashTool}, "", "Bash", `{"command":"echo louter-ok","description":"Run the command"}`},
		{"backquotes", "Please run `ls -la > out.txt` now", "", []testTool{bashTool}, "", "Bash", `{"command":"ls -la > out.txt","description":"Run the command"}`},
		{"codex exec_command", `Run "echo hi"`, "", []testTool{{"exec_command", `{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}`}}, "", "exec_command", `{"cmd":"echo hi"}`},
		{"gemini run_shell_command", `Run "echo hi"`, "", []testTool{{"run_shell_command", `{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"}},"required":["command"]}`}}, "", "run_shell_command", `{"command":"echo hi","description":"Run the command"}`},
		{"argv shell", `Run "echo hi"`, "", []testTool{{"shell", `{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}}}`}}, "", "shell", `{"command":["bash","-lc","echo hi"]}`},
		{"cursor", `Run "echo hi"`, "", []testTool{{"run_terminal_cmd", `{"type":"object","properties":{"command":{"type":"string"}}}`}}, "", "run_terminal_cmd", `{"command":"echo hi"}`},
		{"no command", "What is up?", "", []testTool{bashTool}, "Hello from louter_mock", "", ""},
		{"no shell tool", `Run "echo hi"`, "", []testTool{weatherTool}, "Hello from louter_mock", "", ""},
	}
	for _, pc := range protocolCases {
		for _, tt := range tests {
			for _, streamed := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", pc.protocol, tt.name, streamed), func(t *testing.T) {
					m := newMock(t, nil) // agent is the default scenario
					w := serve(t, m, newRequest(http.MethodPost, pc.path, pc.body(streamed, tt.userText, tt.toolResult, tt.tools)))
					d := decodeBody(t, pc.protocol, w, false)
					if d.err != nil {
						t.Fatalf("status %d, stream error %v", w.Code, d.err)
					}
					calls := toolCalls(d.resp)
					if tt.wantTool == "" {
						if text := partsText(d.resp, translate.PartText); !strings.HasPrefix(text, tt.wantText) || len(calls) != 0 || d.resp.StopReason != translate.StopEndTurn {
							t.Errorf("text %q, calls %d, stop %q; want text %q", text, len(calls), d.resp.StopReason, tt.wantText)
						}
						return
					}
					if len(calls) != 1 || calls[0].Name != tt.wantTool || calls[0].Arguments != tt.wantArgs || d.resp.StopReason != translate.StopToolUse {
						t.Errorf("calls %+v, stop %q; want %s %s", calls, d.resp.StopReason, tt.wantTool, tt.wantArgs)
					}
				})
			}
		}
	}
}

func TestAgentScenarioSkipsSystemReminders(t *testing.T) {
	body := `{"model":"claude-test","max_tokens":10,"tools":[{"name":"Bash","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":[` +
		`{"type":"text","text":"<system-reminder>\nUse \"the force\" wisely.\n</system-reminder>"},` +
		`{"type":"text","text":"Run the shell command \"echo louter-ok\"."},` +
		`{"type":"text","text":"<system-reminder>Files: \"a.go\"</system-reminder>"}]}]}`
	m := newMock(t, nil)
	d := decodeBody(t, translate.ProtocolAnthropic, serve(t, m, newRequest(http.MethodPost, "/v1/messages", body)), false)
	calls := toolCalls(d.resp)
	if len(calls) != 1 || gjson.Get(calls[0].Arguments, "command").String() != "echo louter-ok" {
		t.Errorf("calls %+v", calls)
	}
}

func TestScenarioSelection(t *testing.T) {
	tests := []struct {
		name     string
		header   string
		userText string
		earlier  string // an earlier user message
		def      string
		want     string
	}{
		{"header wins over marker", "echo", "[mock:long] hi", "", "", "echo"},
		{"marker wins over default", "", "please [mock:echo] now", "", "long", "echo"},
		{"default", "", "hi", "", "echo", "echo"},
		{"agent is the default default", "", "hi", "", "", "agent"},
		{"marker only in the last user message", "", "hi", "[mock:long]", "echo", "echo"},
		{"fixture marker", "", "[mock:fixture=a.sse]", "", "", "fixture=a.sse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := []translate.Message{}
			if tt.earlier != "" {
				msgs = append(msgs,
					translate.Message{Role: translate.RoleUser, Parts: []translate.Part{{Type: translate.PartText, Text: tt.earlier}}},
					translate.Message{Role: translate.RoleAssistant, Parts: []translate.Part{{Type: translate.PartText, Text: "ok"}}})
			}
			msgs = append(msgs,
				translate.Message{Role: translate.RoleUser, Parts: []translate.Part{{Type: translate.PartText, Text: tt.userText}}},
				// Claude Code sometimes ends with a system message.
				translate.Message{Role: translate.RoleSystem, Parts: []translate.Part{{Type: translate.PartText, Text: "[mock:text]"}}})
			r := httptest.NewRequest(http.MethodPost, "/v1/messages", nil)
			if tt.header != "" {
				r.Header.Set(ScenarioHeader, tt.header)
			}
			m := newMock(t, &Mock{DefaultScenario: tt.def})
			if got := selectScenario(r, &translate.Request{Messages: msgs}, m.DefaultScenario); got != tt.want {
				t.Errorf("scenario %q, want %q", got, tt.want)
			}
		})
	}
	// End to end: the marker picks echo, and the journal records it.
	for _, pc := range protocolCases {
		m := newMock(t, &Mock{Name: "selection-" + string(pc.protocol), DefaultScenario: "text"})
		w := serve(t, m, newRequest(http.MethodPost, pc.path, pc.body(false, "say [mock:echo] this", "", nil)))
		d := decodeBody(t, pc.protocol, w, false)
		if got := partsText(d.resp, translate.PartText); got != "say [mock:echo] this" {
			t.Errorf("%s: marker did not select echo: %q", pc.protocol, got)
		}
		if e := journalEntries(t, m); len(e) != 1 || e[0]["scenario"] != "echo" {
			t.Errorf("%s: journal %v", pc.protocol, e)
		}
	}
}

func TestErrorScenarios(t *testing.T) {
	tests := []struct {
		scenario string
		status   int
		kind     translate.ErrorKind
	}{
		{"error_400", 400, translate.ErrInvalidRequest},
		{"error_401", 401, translate.ErrAuthentication},
		{"error_429", 429, translate.ErrRateLimit},
		{"error_500", 500, translate.ErrAPI},
		{"error_overloaded", 0, translate.ErrOverloaded}, // 0: the provider's overloaded status
	}
	for _, pc := range protocolCases {
		codec := mustCodec(t, pc.protocol)
		for _, tt := range tests {
			if tt.status == 0 {
				tt.status = protocolForPath(pc.path).overloadedStatus
			}
			for _, streamed := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", pc.protocol, tt.scenario, streamed), func(t *testing.T) {
					m := newMock(t, nil)
					w := serve(t, m, newRequest(http.MethodPost, pc.path, pc.body(streamed, "hi", "", nil), ScenarioHeader, tt.scenario))
					if w.Code != tt.status {
						t.Fatalf("status %d, want %d", w.Code, tt.status)
					}
					wantRetry := ""
					if tt.status == 429 {
						wantRetry = "7"
					}
					if got := w.Header().Get("Retry-After"); got != wantRetry {
						t.Errorf("Retry-After %q, want %q", got, wantRetry)
					}
					if ct := w.Header().Get("Content-Type"); ct != "application/json" {
						t.Errorf("Content-Type %q", ct)
					}
					if w.Header().Get(BackendHeader) != m.Name {
						t.Errorf("no %s header on an error", BackendHeader)
					}
					assertErrorShape(t, pc.protocol, w.Body.Bytes())
					if e := codec.DecodeError(w.Code, w.Body.Bytes()); e.Kind != tt.kind || !strings.Contains(e.Message, tt.scenario) {
						t.Errorf("decoded error %+v, want kind %s", e, tt.kind)
					}
				})
			}
		}
	}
}

// assertErrorShape checks an error body has its protocol's shape.
func assertErrorShape(t *testing.T, p translate.Protocol, body []byte) {
	t.Helper()
	switch p {
	case translate.ProtocolAnthropic:
		if gjson.GetBytes(body, "type").String() != "error" || gjson.GetBytes(body, "error.type").String() == "" || gjson.GetBytes(body, "error.message").String() == "" {
			t.Errorf("not an Anthropic error: %s", body)
		}
	case translate.ProtocolOpenAIChat:
		if gjson.GetBytes(body, "error.message").String() == "" || !gjson.GetBytes(body, "error.type").Exists() {
			t.Errorf("not an OpenAI error: %s", body)
		}
	}
}

func TestRequestErrors(t *testing.T) {
	for _, pc := range protocolCases {
		tests := []struct {
			name, method, body, scenario string
			status                       int
		}{
			{"tool without tools", http.MethodPost, pc.body(false, "hi", "", nil), "tool", 400},
			{"parallel_tools without tools", http.MethodPost, pc.body(true, "hi", "", nil), "parallel_tools", 400},
			{"unknown scenario", http.MethodPost, pc.body(false, "hi", "", nil), "nope", 400},
			{"fixture without fixtures_dir", http.MethodPost, pc.body(false, "hi", "", nil), "fixture=a.json", 400},
			{"invalid JSON", http.MethodPost, `{"model":`, "", 400},
			{"wrong method", http.MethodGet, "", "", 405},
		}
		for _, tt := range tests {
			t.Run(string(pc.protocol)+"/"+tt.name, func(t *testing.T) {
				m := newMock(t, nil)
				w := serve(t, m, newRequest(tt.method, pc.path, tt.body, ScenarioHeader, tt.scenario))
				if w.Code != tt.status {
					t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
				}
				assertErrorShape(t, pc.protocol, w.Body.Bytes())
			})
		}
	}
}

func TestNotFound(t *testing.T) {
	m := newMock(t, nil)
	w := serve(t, m, newRequest(http.MethodPost, "/v1/audio/speech", `{"input":"x"}`))
	if w.Code != http.StatusNotFound || !json.Valid(w.Body.Bytes()) || gjson.Get(w.Body.String(), "error.message").String() == "" {
		t.Errorf("got %d %s", w.Code, w.Body)
	}
	if w.Header().Get(BackendHeader) != m.Name || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", w.Header())
	}
	// Unknown paths are journaled too, without a protocol.
	if e := journalEntries(t, m); len(e) != 1 || e[0]["protocol"] != "" || e[0]["path"] != "/v1/audio/speech" {
		t.Errorf("journal %v", e)
	}
}

func TestStreamError(t *testing.T) {
	for _, pc := range protocolCases {
		spec := protocolForPath(pc.path)
		t.Run(string(pc.protocol)+"/stream", func(t *testing.T) {
			m := newMock(t, nil)
			w := serve(t, m, newRequest(http.MethodPost, pc.path, pc.body(true, "hi", "", nil), ScenarioHeader, "stream_error"))
			if w.Code != http.StatusOK {
				t.Fatalf("status %d", w.Code)
			}
			d := decodeBody(t, pc.protocol, w, false)
			if d.err == nil || d.err.Kind != translate.ErrOverloaded {
				t.Fatalf("stream ended with %+v, want an overloaded error\n%s", d.err, w.Body)
			}
			if n := countDeltas(d.events, translate.BlockText); n != faultAfter {
				t.Errorf("%d text deltas before the error, want %d", n, faultAfter)
			}
		})
		t.Run(string(pc.protocol)+"/complete", func(t *testing.T) {
			m := newMock(t, nil)
			w := serve(t, m, newRequest(http.MethodPost, pc.path, pc.body(false, "hi", "", nil), ScenarioHeader, "stream_error"))
			if w.Code != spec.overloadedStatus {
				t.Fatalf("status %d, want %d", w.Code, spec.overloadedStatus)
			}
			if e := mustCodec(t, pc.protocol).DecodeError(w.Code, w.Body.Bytes()); e.Kind != translate.ErrOverloaded {
				t.Errorf("decoded %+v", e)
			}
		})
	}
}

func TestStreamCut(t *testing.T) {
	for _, pc := range protocolCases {
		t.Run(string(pc.protocol)+"/stream", func(t *testing.T) {
			m := newMock(t, nil)
			w := serveAborting(t, m, newRequest(http.MethodPost, pc.path, pc.body(true, "hi", "", nil), ScenarioHeader, "stream_cut"))
			if !w.Flushed {
				t.Error("nothing was flushed before the cut")
			}
			d := decodeBody(t, pc.protocol, w, false)
			if n := countDeltas(d.events, translate.BlockText); n != faultAfter {
				t.Errorf("%d text deltas before the cut, want %d", n, faultAfter)
			}
			if d.err == nil {
				t.Error("a cut stream decoded as complete")
			}
		})
		t.Run(string(pc.protocol)+"/complete", func(t *testing.T) {
			m := newMock(t, nil)
			w := serveAborting(t, m, newRequest(http.MethodPost, pc.path, pc.body(false, "hi", "", nil), ScenarioHeader, "stream_cut"))
			if w.Body.Len() == 0 || json.Valid(w.Body.Bytes()) {
				t.Errorf("want half a JSON body before the cut, got %q", w.Body)
			}
		})
	}
}

func TestStreamMalformed(t *testing.T) {
	for _, pc := range protocolCases {
		t.Run(string(pc.protocol), func(t *testing.T) {
			m := newMock(t, nil)
			w := serve(t, m, newRequest(http.MethodPost, pc.path, pc.body(true, "hi", "", nil), ScenarioHeader, "stream_malformed"))
			if !strings.Contains(w.Body.String(), "\n\ndata: {not json\n\n") {
				t.Fatalf("no garbage event in\n%s", w.Body)
			}
			// The protocol's own decoder takes the garbage for an upstream
			// failure, and the mock still ends its stream normally after it.
			d := decodeBody(t, pc.protocol, w, false)
			if d.err == nil || d.err.Status != http.StatusBadGateway {
				t.Fatalf("a malformed event must fail the stream, got %v", d.err)
			}
			if _, after, _ := strings.Cut(w.Body.String(), "{not json\n\n"); !strings.Contains(after, "data: ") {
				t.Errorf("the mock's stream does not go on after the garbage:\n%s", w.Body)
			}
		})
	}
	m := newMock(t, nil)
	w := serve(t, m, newRequest(http.MethodPost, "/v1/messages", protocolCases[0].body(false, "hi", "", nil), ScenarioHeader, "stream_malformed"))
	if w.Code != 200 || w.Body.String() != "{not json" {
		t.Errorf("non-streaming stream_malformed: %d %q", w.Code, w.Body)
	}
}

// cancellingWriter cancels the request context after its first body write,
// as a client that goes away once the stream has started.
type cancellingWriter struct {
	*httptest.ResponseRecorder
	cancel context.CancelFunc
	writes int
}

func (w *cancellingWriter) Write(p []byte) (int, error) {
	w.writes++
	defer w.cancel()
	return w.ResponseRecorder.Write(p)
}

func TestSlowScenarioStopsWhenTheClientGoesAway(t *testing.T) {
	for _, pc := range protocolCases {
		t.Run(string(pc.protocol), func(t *testing.T) {
			m := newMock(t, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := newRequest(http.MethodPost, pc.path, pc.body(true, "hi", "", nil), ScenarioHeader, "slow").WithContext(ctx)
			w := &cancellingWriter{ResponseRecorder: httptest.NewRecorder(), cancel: cancel}
			if err := m.ServeHTTP(w, r, nil); err != nil {
				t.Fatal(err)
			}
			if w.writes != 1 {
				t.Errorf("%d writes after the client went away, want only the first", w.writes-1)
			}
			e := journalEntries(t, m)
			if len(e) != 1 || e[0]["cancelled"] != true || e[0]["scenario"] != "slow" {
				t.Errorf("journal %v, want the request marked cancelled", e)
			}
		})
	}
	// A non-streaming slow answer waits too, and gives up when the client
	// has gone.
	m := newMock(t, &Mock{Name: "slow-complete"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := serve(t, m, newRequest(http.MethodPost, "/v1/messages", protocolCases[0].body(false, "hi", "", nil), ScenarioHeader, "slow").WithContext(ctx))
	if w.Body.Len() != 0 {
		t.Errorf("wrote %q to a client that had gone", w.Body)
	}
	if e := journalEntries(t, m); len(e) != 1 || e[0]["cancelled"] != true {
		t.Errorf("journal %v", e)
	}
	// A request that completes is not marked cancelled.
	m = newMock(t, nil)
	serve(t, m, newRequest(http.MethodPost, "/v1/messages", protocolCases[0].body(true, "hi", "", nil), ScenarioHeader, "text"))
	if e := journalEntries(t, m); len(e) != 1 || e[0]["cancelled"] != false {
		t.Errorf("journal %v", e)
	}
}

// recordingWriter records the size of every write.
type recordingWriter struct {
	*httptest.ResponseRecorder
	sizes []int
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.sizes = append(w.sizes, len(p))
	return w.ResponseRecorder.Write(p)
}

func TestChunking(t *testing.T) {
	for _, pc := range protocolCases {
		t.Run(string(pc.protocol), func(t *testing.T) {
			whole := &recordingWriter{ResponseRecorder: httptest.NewRecorder()}
			m := newMock(t, nil)
			if err := m.ServeHTTP(whole, newRequest(http.MethodPost, pc.path, pc.body(true, "hi", "", []testTool{weatherTool}), ScenarioHeader, "tool"), nil); err != nil {
				t.Fatal(err)
			}
			chunked := &recordingWriter{ResponseRecorder: httptest.NewRecorder()}
			m = newMock(t, &Mock{Name: m.Name + "-chunked", ChunkSize: 7})
			if err := m.ServeHTTP(chunked, newRequest(http.MethodPost, pc.path, pc.body(true, "hi", "", []testTool{weatherTool}), ScenarioHeader, "tool"), nil); err != nil {
				t.Fatal(err)
			}
			for _, n := range chunked.sizes {
				if n > 7 {
					t.Fatalf("a write of %d bytes with chunk_size 7", n)
				}
			}
			if len(chunked.sizes) <= len(whole.sizes) {
				t.Errorf("%d chunked writes, %d whole ones", len(chunked.sizes), len(whole.sizes))
			}
			// One write per encoded event without chunk_size: every write
			// ends an SSE event.
			for _, n := range whole.sizes {
				if n < 2 {
					t.Errorf("tiny write of %d bytes without chunk_size", n)
				}
			}
			d := decodeBody(t, pc.protocol, chunked.ResponseRecorder, false)
			if calls := toolCalls(d.resp); d.err != nil || len(calls) != 1 || !gjson.Valid(calls[0].Arguments) {
				t.Errorf("chunked stream decoded to %+v, %v", d.resp, d.err)
			}
		})
	}
}

func TestModelPrefix(t *testing.T) {
	for _, pc := range protocolCases {
		for _, streamed := range []bool{false, true} {
			m := newMock(t, &Mock{Name: fmt.Sprintf("prefix-%s-%v", pc.protocol, streamed), ModelPrefix: "backend/"})
			body := pc.body(streamed, "hi", "", nil)
			d := decodeBody(t, pc.protocol, serve(t, m, newRequest(http.MethodPost, pc.path, body, ScenarioHeader, "text")), false)
			if want := "backend/" + gjson.Get(body, "model").String(); d.resp == nil || d.resp.Model != want {
				t.Errorf("%s stream=%v: model %+v, want %q", pc.protocol, streamed, d.resp, want)
			}
		}
	}
}

func TestProvisionAndValidate(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	var m Mock
	if err := m.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if m.Name != "mock" || m.DefaultScenario != "agent" || m.journal != journalFor("mock") {
		t.Errorf("defaults not set: %+v", m)
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
	for _, bad := range []Mock{
		{DefaultScenario: "nope"},
		{DefaultScenario: "fixture="},
		{DefaultScenario: "text", ChunkSize: -1},
		{DefaultScenario: "text", ChunkDelay: -1},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validated", bad)
		}
	}
	if err := (&Mock{DefaultScenario: "fixture=x.sse"}).Validate(); err != nil {
		t.Error(err)
	}
}
