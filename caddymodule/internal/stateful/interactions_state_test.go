package stateful

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestInteractionsAssembler: a stream's step events, split anywhere,
// become the Interaction object a POST without stream answers: text joined
// into its model_output step, the thought's summary and signature, the
// call's arguments as an object; and the stored turn is whole the moment
// interaction.completed is read.
func TestInteractionsAssembler(t *testing.T) {
	stream := strings.Join([]string{
		string(sseEvent("interaction.created", `{"event_type":"interaction.created","interaction":{"id":"v1_1","object":"interaction","status":"in_progress","model":"m"}}`)),
		": keep-alive\n\n",
		string(sseEvent("step.start", `{"event_type":"step.start","index":0,"step":{"type":"thought"}}`)),
		string(sseEvent("step.delta", `{"event_type":"step.delta","index":0,"delta":{"type":"thought_summary","content":{"type":"text","text":"Think"}}}`)),
		string(sseEvent("step.delta", `{"event_type":"step.delta","index":0,"delta":{"type":"thought_signature","signature":"c2ln"}}`)),
		string(sseEvent("step.stop", `{"event_type":"step.stop","index":0}`)),
		string(sseEvent("step.start", `{"event_type":"step.start","index":1,"step":{"type":"model_output"}}`)),
		string(sseEvent("step.delta", `{"event_type":"step.delta","index":1,"delta":{"type":"text","text":"Hel"}}`)),
		string(sseEvent("step.delta", `{"event_type":"step.delta","index":1,"delta":{"type":"text","text":"lo"}}`)),
		string(sseEvent("step.stop", `{"event_type":"step.stop","index":1}`)),
		string(sseEvent("step.start", `{"event_type":"step.start","index":2,"step":{"type":"function_call","id":"c1","name":"f","arguments":{}}}`)),
		string(sseEvent("step.delta", `{"event_type":"step.delta","index":2,"delta":{"type":"arguments_delta","arguments":"{\"a\":"}}`)),
		string(sseEvent("step.delta", `{"event_type":"step.delta","index":2,"delta":{"type":"arguments_delta","partial_arguments":"1}"}}`)),
		string(sseEvent("step.stop", `{"event_type":"step.stop","index":2}`)),
		string(sseEvent("interaction.completed", `{"event_type":"interaction.completed","interaction":{"id":"v1_1","object":"interaction","status":"requires_action","model":"m","usage":{"total_tokens":3}}}`)),
	}, "")
	for _, chunk := range []int{1, 7, len(stream)} {
		completed := false
		c := &captureWriter{ResponseWriter: &discardWriter{h: http.Header{"Content-Type": {"text/event-stream"}}}, object: "interaction",
			asm: Interactions.assembler(), complete: func() { completed = true }}
		c.WriteHeader(http.StatusOK)
		for i := 0; i < len(stream); i += chunk {
			_, _ = c.Write([]byte(stream[i:min(i+chunk, len(stream))]))
		}
		got := gjson.ParseBytes(c.response())
		if !completed || got.Get("id").Str != "v1_1" || got.Get("status").Str != "requires_action" || got.Get("usage.total_tokens").Int() != 3 ||
			got.Get("steps.0.signature").Str != "c2ln" || got.Get("steps.0.summary.0.text").Str != "Think" ||
			got.Get("steps.1.content.0.text").Str != "Hello" || got.Get("steps.2.arguments.a").Int() != 1 || got.Get("steps.#").Int() != 3 {
			t.Errorf("chunks of %d: completed %v, %s", chunk, completed, got.Raw)
		}
	}
}

// BenchmarkInteractionsCapture: the store's tap on an Interactions stream,
// per text delta event (every data line is read, and its text kept for the
// stored turn).
func BenchmarkInteractionsCapture(b *testing.B) {
	delta := sseEvent("step.delta", `{"event_type":"step.delta","index":1,"delta":{"type":"text","text":"`+strings.Repeat("z", 40)+`"}}`)
	start := sseEvent("step.start", `{"event_type":"step.start","index":1,"step":{"type":"model_output"}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(delta)))
	c := &captureWriter{ResponseWriter: &discardWriter{h: http.Header{"Content-Type": {"text/event-stream"}}}, object: "interaction", asm: Interactions.assembler()}
	c.WriteHeader(http.StatusOK)
	_, _ = c.Write(start)
	for b.Loop() {
		_, _ = c.Write(delta)
	}
}
