package translate

import (
	"slices"
	"testing"

	"github.com/tidwall/gjson"
)

// converseCacheRequest marks a system block, a message's text, a tool
// result's content and a tool with cache_control.
const converseCacheRequest = `{"model":"m","max_tokens":100,
	"system":[{"type":"text","text":"rules","cache_control":{"type":"ephemeral"}},{"type":"text","text":"today"}],
	"tools":[{"name":"get_weather","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral","ttl":"1h"}},{"name":"get_time","input_schema":{"type":"object"}}],
	"messages":[
		{"role":"user","content":[{"type":"text","text":"long document","cache_control":{"type":"ephemeral"}},{"type":"text","text":"question"}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"get_weather","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"sunny","cache_control":{"type":"ephemeral"}}]}]}]}`

// TestConverseCacheControl: cache_control becomes a cachePoint block after
// the marked block where Bedrock caches prompts for the model (Claude:
// system, messages and tools; Nova: not tools), and is dropped, recorded,
// everywhere else.
func TestConverseCacheControl(t *testing.T) {
	const point = `{"cachePoint":{"type":"default"}}`
	tests := []struct {
		model       string
		points      map[string]string // path: the block expected there
		noPoints    []string          // paths that must hold no cachePoint
		wantDropped []string
	}{
		{model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
			points: map[string]string{
				"system.1":                         point,
				"messages.0.content.1":             point,
				"messages.2.content.1":             point,
				"toolConfig.tools.1":               `{"cachePoint":{"type":"default","ttl":"1h"}}`,
				"messages.0.content.2.text":        "question",
				"system.2.text":                    "today",
				"toolConfig.tools.2.toolSpec.name": "get_time",
			}},
		{model: "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-7-sonnet-20250219-v1:0",
			points: map[string]string{"system.1": point, "toolConfig.tools.1.cachePoint.type": "default"}},
		{model: "amazon.nova-pro-v1:0",
			points:      map[string]string{"system.1": point, "messages.0.content.1": point, "messages.2.content.1": point},
			noPoints:    []string{"toolConfig.tools"},
			wantDropped: []string{"cache_control: " + cvDropCacheTools}},
		{model: "meta.llama3-3-70b-instruct-v1:0",
			noPoints:    []string{"system", "messages.0.content", "messages.2.content", "toolConfig.tools"},
			wantDropped: []string{"cache_control: " + cvDropCacheModel}},
		{model: "anthropic.claude-3-haiku-20240307-v1:0",
			noPoints:    []string{"system", "messages.0.content", "toolConfig.tools"},
			wantDropped: []string{"cache_control: " + cvDropCacheModel}},
		{model: "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3",
			noPoints:    []string{"system", "messages.0.content"},
			wantDropped: []string{"cache_control: " + cvDropCacheModel}},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			req, err := anthropicCodec{}.DecodeRequest([]byte(converseCacheRequest))
			if err != nil {
				t.Fatal(err)
			}
			req.Model = tt.model
			body, err := bedrockConverseCodec{}.EncodeRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			g := gjson.ParseBytes(body)
			for path, want := range tt.points {
				got := g.Get(path)
				if got.Raw != want && got.String() != want {
					t.Errorf("%s = %s, want %s", path, got.Raw, want)
				}
			}
			for _, path := range tt.noPoints {
				g.Get(path).ForEach(func(_, b gjson.Result) bool {
					if b.Get("cachePoint").Exists() {
						t.Errorf("%s holds a cache point: %s", path, g.Get(path).Raw)
					}
					return true
				})
			}
			if !slices.Equal(req.Dropped, tt.wantDropped) {
				t.Errorf("dropped %q, want %q", req.Dropped, tt.wantDropped)
			}
		})
	}
}
