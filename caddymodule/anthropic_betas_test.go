package caddymodule

import (
	"net/http"
	"slices"
	"testing"
)

func TestBetaRules(t *testing.T) {
	sent := []string{"claude-code-20250219", "interleaved-thinking-2025-05-14", "advanced-tool-use-2025-11-20", "tool-search-tool-2025-10-19", "files-api-2025-04-14"}
	tests := []struct {
		name     string
		rule     *betaRule
		drop     []string
		kept     []string
		nDropped int
	}{
		{"bedrock default", bedrockBetas, nil, []string{"interleaved-thinking-2025-05-14", "tool-search-tool-2025-10-19"}, 2},
		{"bedrock, one more kept", bedrockBetas, []string{"!claude-code-*"}, []string{"claude-code-20250219", "interleaved-thinking-2025-05-14", "tool-search-tool-2025-10-19"}, 1},
		{"bedrock, one accepted dropped", bedrockBetas, []string{"interleaved-*"}, []string{"tool-search-tool-2025-10-19"}, 3},
		{"last pattern wins", vertexBetas, []string{"!files-*", "files-api-*"}, []string{"interleaved-thinking-2025-05-14", "tool-search-tool-2025-10-19"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &Backend{name: "x", DropBetas: tt.drop}
			kept, dropped := tt.rule.apply(b, sent)
			if !slices.Equal(kept, tt.kept) || len(dropped) != tt.nDropped {
				t.Errorf("kept %q, dropped %q", kept, dropped)
			}
		})
	}
}

func TestTranslatedBetas(t *testing.T) {
	b := &Backend{name: "x"}
	h := http.Header{}
	body, dropped := translatedBetas(b, bedrockBetas, []string{"claude-code-20250219"}, h, []byte(`{}`))
	if string(body) != `{}` || len(dropped) != 1 || h.Get("Anthropic-Beta") != "" {
		t.Errorf("none kept: body %s, dropped %q", body, dropped)
	}
	body, _ = translatedBetas(b, bedrockBetas, []string{"context-1m-2025-08-07"}, h, []byte(`{}`))
	if string(body) != `{"anthropic_beta":["context-1m-2025-08-07"]}` {
		t.Errorf("body %s", body)
	}
	body, _ = translatedBetas(b, bedrockBetas, []string{"context-1m-2025-08-07", "context-management-2025-06-27"}, h, []byte(`{"anthropic_beta":["context-management-2025-06-27"]}`))
	if string(body) != `{"anthropic_beta":["context-management-2025-06-27","context-1m-2025-08-07"]}` {
		t.Errorf("merged with the encoder's: body %s", body)
	}
	if got := clientBetas(http.Header{"Anthropic-Beta": {"a, b", "c"}}); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("clientBetas %q", got)
	}
}
