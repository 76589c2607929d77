package translate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// The answers of the three backends that run searches, each with one search
// (query "louter caddy", two sources) before or after the text.
var serverToolAnswers = []struct {
	backend Protocol
	body    string
	// frames is the same answer streamed: name and data of each event.
	frames [][2]string
	// encrypted are the backend's opaque contents, which no other
	// protocol's client may get.
	encrypted []string
}{
	{
		backend: ProtocolAnthropic,
		body: `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[
			{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"louter caddy"}},
			{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[
				{"type":"web_search_result","url":"https://a.example/1","title":"One","encrypted_content":"ENC-A1","page_age":"2 days ago"},
				{"type":"web_search_result","url":"https://b.example/2","title":"Two","encrypted_content":"ENC-B2"}]},
			{"type":"text","text":"Louter is a Caddy module.","citations":[{"type":"web_search_result_location","url":"https://a.example/1","title":"One","cited_text":"a Caddy module","encrypted_index":"EIDX-1"}]}],
			"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}`,
		frames: [][2]string{
			{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`},
			{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"louter"}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":" caddy\"}"}}`},
			{"content_block_stop", `{"type":"content_block_stop","index":0}`},
			{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://a.example/1","title":"One","encrypted_content":"ENC-A1","page_age":"2 days ago"},{"type":"web_search_result","url":"https://b.example/2","title":"Two","encrypted_content":"ENC-B2"}]}}`},
			{"content_block_stop", `{"type":"content_block_stop","index":1}`},
			{"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://a.example/1","title":"One","cited_text":"a Caddy module","encrypted_index":"EIDX-1"}}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Louter is a Caddy module."}}`},
			{"content_block_stop", `{"type":"content_block_stop","index":2}`},
			{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`},
			{"message_stop", `{"type":"message_stop"}`},
		},
		encrypted: []string{"ENC-A1", "EIDX-1"},
	},
	{
		backend: ProtocolOpenAIResponses,
		body: `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5","output":[
			{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"louter caddy","sources":[{"type":"url","url":"https://a.example/1"},{"type":"url","url":"https://b.example/2"}]}},
			{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Louter is a Caddy module.","annotations":[{"type":"url_citation","url":"https://a.example/1","title":"One","start_index":10,"end_index":24}]}]}],
			"usage":{"input_tokens":10,"output_tokens":5}}`,
		frames: [][2]string{
			{"response.created", `{"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]}}`},
			{"response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"type":"web_search_call","id":"ws_1","status":"in_progress"}}`},
			{"response.web_search_call.in_progress", `{"type":"response.web_search_call.in_progress","output_index":0,"item_id":"ws_1"}`},
			{"response.web_search_call.searching", `{"type":"response.web_search_call.searching","output_index":0,"item_id":"ws_1"}`},
			{"response.web_search_call.completed", `{"type":"response.web_search_call.completed","output_index":0,"item_id":"ws_1"}`},
			{"response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"louter caddy","sources":[{"type":"url","url":"https://a.example/1"},{"type":"url","url":"https://b.example/2"}]}}}`},
			{"response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"msg_1","role":"assistant","status":"in_progress","content":[]}}`},
			{"response.output_text.delta", `{"type":"response.output_text.delta","output_index":1,"item_id":"msg_1","content_index":0,"delta":"Louter is a Caddy module."}`},
			{"response.output_text.annotation.added", `{"type":"response.output_text.annotation.added","output_index":1,"item_id":"msg_1","content_index":0,"annotation_index":0,"annotation":{"type":"url_citation","url":"https://a.example/1","title":"One","start_index":10,"end_index":24}}`},
			{"response.output_item.done", `{"type":"response.output_item.done","output_index":1,"item":{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Louter is a Caddy module.","annotations":[{"type":"url_citation","url":"https://a.example/1","title":"One","start_index":10,"end_index":24}]}]}}`},
			{"response.completed", `{"type":"response.completed","response":{"id":"resp_1","status":"completed","usage":{"input_tokens":10,"output_tokens":5}}}`},
		},
	},
	{
		backend: ProtocolGemini,
		body: `{"candidates":[{"content":{"role":"model","parts":[{"text":"Louter is a Caddy module."}]},"finishReason":"STOP","index":0,
			"groundingMetadata":{"webSearchQueries":["louter caddy"],"groundingChunks":[{"web":{"uri":"https://a.example/1","title":"One"}},{"web":{"uri":"https://b.example/2","title":"Two"}}],"groundingSupports":[{"segment":{"startIndex":10,"endIndex":24,"text":"a Caddy module"},"groundingChunkIndices":[0]}]}}],
			"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5},"modelVersion":"gemini-2.5-flash"}`,
		frames: [][2]string{
			{"", `{"candidates":[{"content":{"role":"model","parts":[{"text":"Louter is a Caddy module."}]},"index":0}],"modelVersion":"gemini-2.5-flash"}`},
			{"", `{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0,"groundingMetadata":{"webSearchQueries":["louter caddy"],"groundingChunks":[{"web":{"uri":"https://a.example/1","title":"One"}},{"web":{"uri":"https://b.example/2","title":"Two"}}],"groundingSupports":[{"segment":{"startIndex":10,"endIndex":24,"text":"a Caddy module"},"groundingChunkIndices":[0]}]}}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5},"modelVersion":"gemini-2.5-flash"}`},
		},
	},
}

// checkServerToolIR asserts the IR of an answer with the search.
func checkServerToolIR(t *testing.T, parts []Part) {
	t.Helper()
	var call, result *ServerToolUse
	var cites []Citation
	for i := range parts {
		cites = append(cites, parts[i].Citations...)
		switch parts[i].Type {
		case PartServerToolCall:
			call = parts[i].Server
		case PartServerToolResult:
			result = parts[i].Server
		}
	}
	if call == nil || call.Kind != ServerWebSearch || call.Query != "louter caddy" || call.ID == "" {
		t.Fatalf("call = %+v", call)
	}
	if result == nil || result.ID != call.ID || len(result.Results) != 2 ||
		result.Results[0].URL != "https://a.example/1" || result.Results[1].URL != "https://b.example/2" {
		t.Fatalf("result = %+v", result)
	}
	// The text cites the first page: "a Caddy module" (bytes 10..24),
	// by its text or by its span.
	if len(cites) != 1 || cites[0].URL != "https://a.example/1" || cites[0].Title != "One" ||
		cites[0].CitedText != "a Caddy module" && (cites[0].Start != 10 || cites[0].End != 24) {
		t.Fatalf("citations = %+v", cites)
	}
}

// serverToolClientChecks says, per client protocol, what its output must
// show of the search: a function of the whole output (the response body or
// the stream's frames joined).
var serverToolClientChecks = []struct {
	client Protocol
	check  func(t *testing.T, out []byte)
}{
	{ProtocolAnthropic, func(t *testing.T, out []byte) {
		for _, want := range []string{`"type":"server_tool_use"`, `"name":"web_search"`, `"type":"web_search_tool_result"`, `"url":"https://a.example/1"`, `"url":"https://b.example/2"`} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("no %s in\n%s", want, out)
			}
		}
		if !bytes.Contains(out, []byte(`louter caddy`)) {
			t.Errorf("no query in\n%s", out)
		}
		if !bytes.Contains(out, []byte(`{"type":"web_search_result_location","url":"https://a.example/1","title":"One","cited_text":`)) {
			t.Errorf("no citation in\n%s", out)
		}
	}},
	{ProtocolOpenAIResponses, func(t *testing.T, out []byte) {
		for _, want := range []string{`"type":"web_search_call"`, `"query":"louter caddy"`, `"sources":[{"type":"url","url":"https://a.example/1"},{"type":"url","url":"https://b.example/2"}]`,
			`"annotations":[{"type":"url_citation","url":"https://a.example/1","title":"One","start_index":`} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("no %s in\n%s", want, out)
			}
		}
	}},
	{ProtocolGemini, func(t *testing.T, out []byte) {
		for _, want := range []string{`"groundingMetadata":{"webSearchQueries":["louter caddy"],"groundingChunks":[{"web":{"uri":"https://a.example/1","title":`,
			`"text":"a Caddy module"},"groundingChunkIndices":[0]}]`} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("no %s in\n%s", want, out)
			}
		}
	}},
	{ProtocolOpenAIChat, func(t *testing.T, out []byte) {
		if bytes.Contains(out, []byte("a.example")) || bytes.Contains(out, []byte("louter caddy")) {
			t.Errorf("an OpenAI Chat client has no place for searches, got\n%s", out)
		}
	}},
	{ProtocolGeminiInteractions, func(t *testing.T, out []byte) {
		for _, want := range []string{`"type":"google_search_call","id":`, `"arguments":{"queries":["louter caddy"]}`, `"type":"google_search_result","call_id":`} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("no %s in\n%s", want, out)
			}
		}
		// google_search_result holds search suggestions, not pages.
		if bytes.Contains(out, []byte("a.example")) {
			t.Errorf("pages in an Interactions answer:\n%s", out)
		}
	}},
}

// TestServerToolResultsResponse: each backend's search reaches each
// client in the client's own shape, and its encrypted content reaches no
// other protocol's client.
func TestServerToolResultsResponse(t *testing.T) {
	for _, a := range serverToolAnswers {
		backend, _ := Lookup(a.backend)
		resp, err := backend.DecodeResponse([]byte(a.body))
		if err != nil {
			t.Fatalf("%s: %v", a.backend, err)
		}
		checkServerToolIR(t, resp.Parts)
		for _, c := range serverToolClientChecks {
			t.Run(string(a.backend)+"→"+string(c.client), func(t *testing.T) {
				client, _ := Lookup(c.client)
				out, err := client.EncodeResponse(resp, &Request{Model: "m"})
				if err != nil {
					t.Fatal(err)
				}
				if !gjson.ValidBytes(out) {
					t.Fatalf("not JSON: %s", out)
				}
				c.check(t, out)
				checkEncrypted(t, a.encrypted, a.backend, c.client, out)
			})
		}
	}
}

// checkEncrypted asserts that the backend's encrypted contents are in out,
// a client's answer, when the client speaks the backend's protocol, and
// nowhere else.
func checkEncrypted(t *testing.T, encrypted []string, backend, client Protocol, out []byte) {
	t.Helper()
	for _, enc := range encrypted {
		if has := bytes.Contains(out, []byte(enc)); has != (client == backend) {
			t.Errorf("encrypted content %s in a %s client's answer: %v, want %v", enc, client, has, client == backend)
		}
	}
}

// serverToolFrames collects a stream encoder's output.
type serverToolFrames struct {
	names []string
	data  [][]byte
}

func (f *serverToolFrames) WriteFrame(name string, data []byte) {
	f.names = append(f.names, name)
	f.data = append(f.data, bytes.Clone(data))
}

// TestServerToolResultsStream is TestServerToolResultsResponse for
// streams: the decoded stream is well formed, every frame a client gets
// is JSON, and the search shows in the client's shape.
func TestServerToolResultsStream(t *testing.T) {
	for _, a := range serverToolAnswers {
		backend, _ := Lookup(a.backend)
		dec := backend.NewStreamDecoder()
		var evs []Event
		for _, f := range a.frames {
			evs = dec.Decode(evs, f[0], []byte(f[1]))
		}
		evs = dec.End(evs)
		checkServerToolGrammar(t, evs)
		var acc Accumulator
		for i := range evs {
			acc.Add(&evs[i])
		}
		resp, e := acc.Result()
		if e != nil {
			t.Fatalf("%s: %v", a.backend, e)
		}
		checkServerToolIR(t, resp.Parts)
		for _, c := range serverToolClientChecks {
			t.Run(string(a.backend)+"→"+string(c.client), func(t *testing.T) {
				client, _ := Lookup(c.client)
				enc := client.NewStreamEncoder(&Request{Model: "m", Stream: true})
				var out serverToolFrames
				for i := range evs {
					enc.Encode(&out, &evs[i])
				}
				for i, d := range out.data {
					if string(d) != "[DONE]" && !gjson.ValidBytes(d) {
						t.Fatalf("frame %d (%s) is not JSON: %s", i, out.names[i], d)
					}
				}
				joined := bytes.Join(out.data, []byte("\n"))
				c.check(t, joined)
				checkEncrypted(t, a.encrypted, a.backend, c.client, joined)
			})
		}
	}
}

// checkServerToolGrammar asserts event.go's grammar for server tool
// blocks: a start carrying Server, then at once its stop.
func checkServerToolGrammar(t *testing.T, evs []Event) {
	t.Helper()
	for i := range evs {
		ev := &evs[i]
		if ev.Type != EventBlockStart || serverToolPart(ev.Block) == "" {
			continue
		}
		if ev.Server == nil || ev.ID != ev.Server.ID || ev.Name != string(ev.Server.Kind) {
			t.Errorf("event %d: server block start %+v", i, ev)
		}
		if i+1 >= len(evs) || evs[i+1].Type != EventBlockStop || evs[i+1].Index != ev.Index {
			t.Errorf("event %d: server block not followed by its stop", i)
		}
	}
	if last := evs[len(evs)-1]; last.Type != EventMessageStop {
		t.Errorf("stream ends with %v", last.Type)
	}
}

// TestServerToolResultsOrder: Anthropic and the Responses API report the
// search before the text, Gemini after it, and each decoder keeps the
// order it was given (nothing is held back).
func TestServerToolResultsOrder(t *testing.T) {
	for _, a := range serverToolAnswers {
		backend, _ := Lookup(a.backend)
		resp, _ := backend.DecodeResponse([]byte(a.body))
		var order []PartType
		for _, p := range resp.Parts {
			order = append(order, p.Type)
		}
		wantFirst := PartServerToolCall
		if a.backend == ProtocolGemini {
			wantFirst = PartText
		}
		if len(order) != 3 || order[0] != wantFirst {
			t.Errorf("%s: parts %v, want %s first", a.backend, order, wantFirst)
		}
	}
}

// serverToolHistoryTurn is an assistant turn a client sends back: the
// search of backend origin (its call id says whose) and the answer.
func serverToolHistoryTurn(id, encrypted string) []Message {
	return []Message{
		{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "What is louter?"}}},
		{Role: RoleAssistant, Parts: []Part{
			{Type: PartServerToolCall, Server: &ServerToolUse{ID: id, Kind: ServerWebSearch, Query: "louter caddy"}},
			{Type: PartServerToolResult, Server: &ServerToolUse{ID: id, Kind: ServerWebSearch, Results: []WebResult{
				{URL: "https://a.example/1", Title: "One", Encrypted: encrypted}}}},
			{Type: PartText, Text: "Louter is a Caddy module."},
		}},
		{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "Thanks. More?"}}},
	}
}

// TestServerToolResultsHistory: a backend gets back its own searches in
// its own shape, and any other's as text in the assistant's turn, with no
// foreign id or encrypted content.
func TestServerToolResultsHistory(t *testing.T) {
	tests := []struct {
		name       string
		backend    Protocol
		id, enc    string
		want, nots []string
	}{
		{"anthropic's own to anthropic", ProtocolAnthropic, "srvtoolu_1", "ENC-A1",
			[]string{`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"louter caddy"}}`, `"encrypted_content":"ENC-A1"`}, nil},
		{"anthropic's own, encrypted content lost on the way, to anthropic", ProtocolAnthropic, "srvtoolu_1", "",
			[]string{`[web_search query: louter caddy]`, `<https://a.example/1>`}, []string{`server_tool_use`, `srvtoolu_1`}},
		{"openai's own to anthropic", ProtocolAnthropic, "ws_1", "",
			[]string{`[web_search query: louter caddy]\n[web_search results]\n1. One <https://a.example/1>`}, []string{`server_tool_use`, `ws_1`}},
		{"anthropic's own to responses", ProtocolOpenAIResponses, "srvtoolu_1", "ENC-A1",
			[]string{`[web_search query: louter caddy]`}, []string{`web_search_call`, `srvtoolu_1`, `ENC-A1`}},
		{"openai's own to responses", ProtocolOpenAIResponses, "ws_1", "",
			[]string{`{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"louter caddy","sources":[{"type":"url","url":"https://a.example/1"}]}}`}, nil},
		{"anthropic's own to gemini", ProtocolGemini, "srvtoolu_1", "ENC-A1",
			[]string{`[web_search query: louter caddy]`}, []string{`srvtoolu_1`, `ENC-A1`}},
		{"gemini's own to gemini", ProtocolGemini, "gs_1", "",
			[]string{`[web_search query: louter caddy]`}, []string{`gs_1`}},
		{"anthropic's own to openai chat", ProtocolOpenAIChat, "srvtoolu_1", "ENC-A1",
			[]string{`[web_search query: louter caddy]`}, []string{`srvtoolu_1`, `ENC-A1`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, _ := Lookup(ProtocolAnthropic)
			backend, _ := Lookup(tt.backend)
			ir := &Request{Model: "m", MaxTokens: 100, Messages: serverToolHistoryTurn(tt.id, tt.enc)}
			before := ir.Messages[1].Parts[0].Type
			out, _, err := TranslateRequest(nil, ir, &RequestRoute{Client: client, Backend: backend, BackendModel: "m"})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("no %s in\n%s", w, out)
				}
			}
			for _, n := range tt.nots {
				if strings.Contains(string(out), n) {
					t.Errorf("%s in\n%s", n, out)
				}
			}
			if ir.Messages[1].Parts[0].Type != before {
				t.Error("the client's request was modified")
			}
		})
	}
}
