package dialect_test

import (
	"encoding/json"
	"fmt"

	"github.com/louter/louter/dialect"
	"github.com/louter/louter/translate"
)

// A self-hosted model (Qwen3-Coder on llama-server without its tool-call
// parser) writes its tool call as XML in the text. A dialect decoder around
// the OpenAI Chat decoder turns it into a tool call, typed by the tool's
// schema, while the text streams.
func ExampleNewDecoder() {
	oai, _ := translate.Lookup(translate.ProtocolOpenAIChat)
	req := &translate.Request{Tools: []translate.Tool{{
		Name:   "get_forecast",
		Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}}}`),
	}}}
	dec := dialect.NewDecoder(oai.NewStreamDecoder(), dialect.Config{
		Dialect: &translate.Dialect{ToolCalls: translate.ToolCallsQwen3Coder},
		Request: req,
	})

	content := []string{"Checking.\n<tool_call>\n<function=get_forecast>\n<parameter=city>\nOslo\n</par", "ameter>\n<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>"}
	var events []translate.Event
	for _, c := range content {
		delta, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": c}}}})
		events = dec.Decode(events, "", delta)
	}
	events = dec.Decode(events, "", []byte(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`))
	events = dec.End(events)

	for _, ev := range events {
		switch {
		case ev.Type == translate.EventBlockStart && ev.Block == translate.BlockToolCall:
			fmt.Println("tool call", ev.Name)
		case ev.Type == translate.EventBlockDelta:
			fmt.Printf("%s %q\n", ev.Block, ev.Text)
		case ev.Type == translate.EventMessageStop:
			fmt.Println("stop", ev.Stop)
		}
	}
	// Output:
	// text "Checking.\n"
	// tool call get_forecast
	// tool_call "{\"city\":\"Oslo\",\"days\":2}"
	// stop tool_use
}
