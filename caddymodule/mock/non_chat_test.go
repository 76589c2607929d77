package mock

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestNonChatEndpoints(t *testing.T) {
	m := newMock(t, nil)
	tests := []struct {
		method, path, body string
		header             []string
		want               []string // gjson paths that must hold, "path=value"
	}{
		{"GET", "/v1/models", "", nil, []string{"object=list", "data.0.id=mock-model-a", "data.1.object=model"}},
		{"GET", "/v1/models", "", []string{"Anthropic-Version", "2023-06-01"}, []string{"data.0.type=model", "has_more=false", "last_id=mock-model-b"}},
		{"GET", "/v1beta/models", "", nil, []string{"models.0.name=models/mock-model-a"}},
		{"POST", "/v1/embeddings", `{"model":"e","input":["ab","abcd"]}`, nil, []string{"object=list", "data.1.index=1", "data.#=2", "model=e"}},
		{"POST", "/v1/completions", `{"model":"c","prompt":"def f(","suffix":"return"}`, nil, []string{"object=text_completion", `choices.0.text=completion of "def f(" before "return"`}},
		{"DELETE", "/v1/responses/resp_x", "", nil, []string{"id=resp_x", "object=response", "deleted=true"}},
	}
	for _, tt := range tests {
		w := serve(t, m, newRequest(tt.method, tt.path, tt.body, tt.header...))
		if w.Code != http.StatusOK {
			t.Errorf("%s %s: %d %s", tt.method, tt.path, w.Code, w.Body)
			continue
		}
		for _, want := range tt.want {
			p, v, _ := strings.Cut(strings.ReplaceAll(want, "mock-", m.Name+"-"), "=")
			if got := gjson.Get(w.Body.String(), p).String(); got != v {
				t.Errorf("%s %s: %s = %q, want %q", tt.method, tt.path, p, got, v)
			}
		}
	}
	w := serve(t, m, newRequest("POST", "/v1/completions", `{"model":"c","prompt":"p","stream":true}`))
	if body := w.Body.String(); w.Header().Get("Content-Type") != "text/event-stream" || strings.Count(body, "data: ") != 3 || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Errorf("stream: %s", body)
	}
}
