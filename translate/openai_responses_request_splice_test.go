package translate

import "testing"

// TestOpenAIResponsesDecodeRequestSplices: the Responses decoder keeps the
// escaped forms of texts and descriptions, and the Anthropic and Gemini
// bodies written from them mean what the escaped ones do.
func TestOpenAIResponsesDecodeRequestSplices(t *testing.T) {
	bodies := [][]byte{
		respClaudeCodeBody(t),
		[]byte(`{"model":"m","instructions":"be \"brief\"\n\u00e9","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"a\tb \ud83d\ude00 \/"}]},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"line1\nline2 \ud800 lone"}],"tools":[{"type":"function","name":"f","description":"d\u2028e","parameters":{"type":"object"}}]}`),
	}
	for _, body := range bodies {
		req, err := openAIResponsesCodec{}.DecodeRequest(body)
		if err != nil {
			t.Fatal(err)
		}
		forms := 0
		for _, m := range req.Messages {
			for _, p := range m.Parts {
				if p.textForm.use(p.Text) {
					forms++
				}
				if p.ToolResult != nil {
					for _, c := range p.ToolResult.Content {
						if c.textForm.use(c.Text) {
							forms++
						}
					}
				}
			}
		}
		if forms == 0 {
			t.Errorf("no text kept its form: %s", body[:80])
		}
		oaiSplicedSameAsEscaped(t, req)
	}
}
