package mock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// newMock provisions and validates a mock whose name is unique to the test,
// so tests never share a journal.
func newMock(t *testing.T, m *Mock) *Mock {
	t.Helper()
	if m == nil {
		m = new(Mock)
	}
	if m.Name == "" {
		m.Name = "test-" + strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	if err := m.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	m.journal.clear()
	return m
}

// serve runs one request through the handler.
func serve(t *testing.T, m *Mock, r *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	if err := m.ServeHTTP(w, r, nil); err != nil {
		t.Fatalf("ServeHTTP: %v", err)
	}
	return w
}

// serveAborting runs a request that must abort the connection and returns
// what was written before the abort.
func serveAborting(t *testing.T, m *Mock, r *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	func() {
		defer func() {
			rec := recover()
			if rec == nil {
				t.Fatal("the handler returned instead of aborting the connection")
			}
			if err, ok := rec.(error); !ok || !errors.Is(err, http.ErrAbortHandler) {
				t.Fatalf("the handler panicked with %v, want http.ErrAbortHandler", rec)
			}
		}()
		_ = m.ServeHTTP(w, r, nil)
	}()
	return w
}

func newRequest(method, path, body string, headers ...string) *http.Request {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, path, rd)
	r.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	return r
}

// testTool is a tool offered in a test request.
type testTool struct {
	name   string
	schema string // raw JSON schema
}

var (
	weatherTool = testTool{"get_weather", `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},"metric":{"type":"boolean"},"note":{"type":"string"}},"required":["city","days","metric"]}`}
	timeTool    = testTool{"get_time", `{"type":"object","properties":{}}`}
	bashTool    = testTool{"Bash", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"},"timeout":{"type":"number","exclusiveMinimum":0}},"required":["command"],"additionalProperties":false}`}
)

// protocolCase is one protocol the tests drive, with its request builders.
type protocolCase struct {
	protocol translate.Protocol
	path     string
	// body builds a request: one user message, or when toolResult is set, a
	// user message, an assistant tool call and the tool's result.
	body func(stream bool, userText string, toolResult string, tools []testTool) string
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var protocolCases = []protocolCase{
	{translate.ProtocolAnthropic, "/anthropic/v1/messages", func(stream bool, userText, toolResult string, tools []testTool) string {
		var ts []string
		for _, t := range tools {
			ts = append(ts, fmt.Sprintf(`{"name":%q,"description":"test tool","input_schema":%s}`, t.name, t.schema))
		}
		msgs := fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%s}]}`, jsonString(userText))
		if toolResult != "" {
			msgs += `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"Bash","input":{"command":"echo"}}]}`
			msgs += fmt.Sprintf(`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":%s}]}`, jsonString(toolResult))
		}
		toolsJSON := ""
		if len(ts) > 0 {
			toolsJSON = `,"tools":[` + strings.Join(ts, ",") + `]`
		}
		return fmt.Sprintf(`{"model":"claude-test","max_tokens":1024,"stream":%v%s,"messages":[%s]}`, stream, toolsJSON, msgs)
	}},
	{translate.ProtocolOpenAIChat, "/v1/chat/completions", func(stream bool, userText, toolResult string, tools []testTool) string {
		var ts []string
		for _, t := range tools {
			ts = append(ts, fmt.Sprintf(`{"type":"function","function":{"name":%q,"description":"test tool","parameters":%s}}`, t.name, t.schema))
		}
		msgs := fmt.Sprintf(`{"role":"user","content":%s}`, jsonString(userText))
		if toolResult != "" {
			msgs += `,{"role":"assistant","content":null,"tool_calls":[{"id":"call_01","type":"function","function":{"name":"Bash","arguments":"{\"command\":\"echo\"}"}}]}`
			msgs += fmt.Sprintf(`,{"role":"tool","tool_call_id":"call_01","content":%s}`, jsonString(toolResult))
		}
		toolsJSON := ""
		if len(ts) > 0 {
			toolsJSON = `,"tools":[` + strings.Join(ts, ",") + `]`
		}
		opts := ""
		if stream {
			opts = `,"stream_options":{"include_usage":true}`
		}
		return fmt.Sprintf(`{"model":"gpt-test","stream":%v%s%s,"messages":[%s]}`, stream, opts, toolsJSON, msgs)
	}},
}

func mustCodec(t *testing.T, p translate.Protocol) translate.Codec {
	t.Helper()
	c, ok := translate.Lookup(p)
	if !ok {
		t.Fatalf("no codec for %s", p)
	}
	return c
}

// decoded is a response read back with the protocol's own decoder.
type decoded struct {
	resp   *translate.Response
	err    *translate.Error // the error a stream ended with
	events []translate.Event
	frames int // SSE events received
}

// decodeBody reads a response body back with the protocol's decoders: the
// stream decoder (through stream.SSEParser and translate.Accumulator) for
// event streams, DecodeResponse otherwise. skipInvalid drops frames whose
// data is not JSON before they reach the decoder.
func decodeBody(t *testing.T, p translate.Protocol, w *httptest.ResponseRecorder, skipInvalid bool) decoded {
	t.Helper()
	codec := mustCodec(t, p)
	body := w.Body.Bytes()
	if !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		resp, err := codec.DecodeResponse(body)
		if err != nil {
			t.Fatalf("DecodeResponse: %v\n%s", err, body)
		}
		return decoded{resp: resp}
	}
	var d decoded
	dec := codec.NewStreamDecoder()
	fn := func(name string, data []byte) {
		d.frames++
		if skipInvalid && string(data) != "[DONE]" && !json.Valid(data) {
			return
		}
		d.events = dec.Decode(d.events, name, data)
	}
	var parser stream.SSEParser
	if err := parser.Feed(body, fn); err != nil {
		t.Fatal(err)
	}
	if err := parser.Close(fn); err != nil {
		t.Fatal(err)
	}
	d.events = dec.End(d.events)
	var acc translate.Accumulator
	for i := range d.events {
		acc.Add(&d.events[i])
	}
	d.resp, d.err = acc.Result()
	return d
}

// partsText joins the parts of a type.
func partsText(r *translate.Response, typ translate.PartType) string {
	var sb strings.Builder
	for _, p := range r.Parts {
		if p.Type == typ {
			sb.WriteString(p.Text)
		}
	}
	return sb.String()
}

func toolCalls(r *translate.Response) []*translate.ToolCall {
	var out []*translate.ToolCall
	for _, p := range r.Parts {
		if p.Type == translate.PartToolCall {
			out = append(out, p.ToolCall)
		}
	}
	return out
}

// countDeltas counts the IR deltas of a block type.
func countDeltas(evs []translate.Event, b translate.BlockType) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == translate.EventBlockDelta && ev.Block == b && ev.Text != "" {
			n++
		}
	}
	return n
}

// journalEntries fetches the journal through the handler, as a client does.
func journalEntries(t *testing.T, m *Mock) []map[string]any {
	t.Helper()
	w := serve(t, m, newRequest(http.MethodGet, "/_mock/requests", ""))
	if w.Code != http.StatusOK {
		t.Fatalf("GET journal: %d %s", w.Code, w.Body)
	}
	var entries []map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &entries); err != nil {
		t.Fatalf("journal is not a JSON array: %v\n%s", err, w.Body)
	}
	return entries
}
