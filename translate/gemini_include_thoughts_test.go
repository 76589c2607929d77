package translate

import (
	"fmt"
	"testing"

	"github.com/tidwall/gjson"
)

// TestGeminiIncludeThoughtsAlone: includeThoughts true without a budget or
// a level asks to see thinking, so backends that think only when asked are
// asked; includeThoughts false alone asks for nothing.
func TestGeminiIncludeThoughtsAlone(t *testing.T) {
	const body = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],
		"generationConfig":{"maxOutputTokens":%d,"thinkingConfig":%s}}`
	for _, tt := range []struct {
		name     string
		maxOut   int
		thinking string
		backend  Codec
		want     map[string]string // gjson path -> value in the backend request ("" : absent)
	}{
		{"anthropic", 16000, `{"includeThoughts":true}`, anthropicCodec{},
			map[string]string{"thinking.type": "enabled", "thinking.budget_tokens": "8192", "max_tokens": "16000"}},
		{"anthropic budget under a small max_tokens", 4000, `{"includeThoughts":true}`, anthropicCodec{},
			map[string]string{"thinking.type": "enabled", "thinking.budget_tokens": "3999", "max_tokens": "4000"}},
		{"responses", 16000, `{"include_thoughts":true}`, openAIResponsesCodec{},
			map[string]string{"reasoning.effort": "medium", "reasoning.summary": "auto"}},
		{"gemini", 16000, `{"includeThoughts":true}`, geminiCodec{},
			map[string]string{"generationConfig.thinkingConfig.thinkingBudget": "-1", "generationConfig.thinkingConfig.includeThoughts": "true"}},
		{"anthropic, thoughts not wanted", 16000, `{"includeThoughts":false}`, anthropicCodec{},
			map[string]string{"thinking": ""}},
		{"responses, thoughts not wanted", 16000, `{"includeThoughts":false}`, openAIResponsesCodec{},
			map[string]string{"reasoning": ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := geminiCodec{}.DecodeRequest([]byte(fmt.Sprintf(body, tt.maxOut, tt.thinking)))
			if err != nil {
				t.Fatal(err)
			}
			req.Model = "m"
			out, err := tt.backend.EncodeRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			for path, want := range tt.want {
				got := gjson.GetBytes(out, path)
				if want == "" && got.Exists() || want != "" && got.String() != want {
					t.Errorf("%s = %s, want %q\n%s", path, got.Raw, want, out)
				}
			}
		})
	}
}
