package mock

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// TestOverflowScenarios checks each wording is answered as its server
// sends it, up front and mid-stream, and that translate reads it back as an
// overflow with the scenario's figures.
func TestOverflowScenarios(t *testing.T) {
	paths := map[translate.Protocol]struct{ path, body, streamPath, streamBody string }{
		translate.ProtocolAnthropic: {"/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
			"/v1/messages", `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		translate.ProtocolOpenAIChat: {"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		translate.ProtocolOpenAIResponses: {"/v1/responses", `{"model":"m","input":"hi"}`, "/v1/responses", `{"model":"m","stream":true,"input":"hi"}`},
		translate.ProtocolGemini: {"/v1beta/models/m:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}]}`,
			"/v1beta/models/m:streamGenerateContent?alt=sse", `{"contents":[{"parts":[{"text":"hi"}]}]}`},
	}
	m := newMock(t, nil)
	for _, name := range overflowNames() {
		w := overflowWordings[name]
		p := paths[w.protocol]
		codec, _ := translate.Lookup(w.protocol)
		t.Run(name, func(t *testing.T) {
			rec := serve(t, m, newRequest("POST", p.path, p.body, ScenarioHeader, "overflow", OverflowHeader, name))
			e := codec.DecodeError(rec.Code, rec.Body.Bytes())
			if rec.Code != 400 || e.Kind != translate.ErrContextOverflow {
				t.Fatalf("%d %s: decoded %+v", rec.Code, rec.Body, e)
			}
			if name != "responses" && (e.PromptTokens != 250000 || e.ContextLimit != 200000) {
				t.Errorf("figures %d > %d", e.PromptTokens, e.ContextLimit)
			}
			rec = serve(t, m, newRequest("POST", p.streamPath, p.streamBody, ScenarioHeader, "overflow_midstream", OverflowHeader, name))
			body := rec.Body.String()
			if rec.Code != 200 || !strings.Contains(body, "Hello") || !strings.HasSuffix(body, "\n\n") {
				t.Fatalf("mid-stream: %d %s", rec.Code, body)
			}
			dec := codec.NewStreamDecoder()
			var evs []translate.Event
			for _, block := range strings.Split(strings.TrimSpace(body), "\n\n") {
				var ev, data string
				for _, line := range strings.Split(block, "\n") {
					if v, ok := strings.CutPrefix(line, "event: "); ok {
						ev = v
					} else if v, ok := strings.CutPrefix(line, "data: "); ok {
						data = v
					}
				}
				if gjson.Valid(data) {
					evs = dec.Decode(evs, ev, []byte(data))
				}
			}
			last := evs[len(evs)-1]
			if last.Type != translate.EventError || last.Err.Kind != translate.ErrContextOverflow {
				t.Fatalf("the stream does not end with the overflow: %+v\n%s", last, body)
			}
		})
	}
	// A wording of another protocol is refused, so a test cannot silently
	// get the wrong server.
	rec := serve(t, m, newRequest("POST", "/v1/messages", paths[translate.ProtocolAnthropic].body, ScenarioHeader, "overflow", OverflowHeader, "vllm"))
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "is no wording of protocol anthropic") {
		t.Errorf("mismatched wording: %d %s", rec.Code, rec.Body)
	}
}
