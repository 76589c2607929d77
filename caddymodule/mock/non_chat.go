package mock

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

// The mock's endpoints besides the chat calls, as the providers answer
// them, so tests can check what a proxy passes through:
//
//   - GET .../models: the mock's models, "{name}-model-a" and
//     "{name}-model-b", in Gemini's shape under /v1beta, in Anthropic's
//     when the request carries anthropic-version, else in OpenAI's;
//   - POST .../v1/embeddings: one 3-dimensional embedding per input;
//   - POST .../v1/completions: OpenAI's legacy text completion (used for
//     fill-in-the-middle), streamed when asked, naming the prompt and the
//     suffix it got;
//   - DELETE .../v1/responses/{id}: the Responses API's deletion answer,
//     {"id","object":"response","deleted":true} (the mock keeps no
//     responses: every id is deleted).
//
// Each request is journaled like a chat call, with an empty protocol.

// serveNonChat answers the endpoints above and reports whether it did.
func (m *Mock) serveNonChat(w http.ResponseWriter, r *http.Request) bool {
	path := r.URL.Path
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		m.journal.record("", r, nil)
		m.serveModelList(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/embeddings"):
		body := m.readJournaled(r)
		m.serveEmbeddings(w, body)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/completions"):
		body := m.readJournaled(r)
		m.serveCompletion(w, r, body)
	case r.Method == http.MethodDelete && storedResponseID(path) != "":
		m.journal.record("", r, nil)
		writeJSONBody(w, map[string]any{"id": storedResponseID(path), "object": "response", "deleted": true})
	default:
		return false
	}
	return true
}

// storedResponseID is the id of a path .../v1/responses/{id}, or "".
func storedResponseID(path string) string {
	_, id, ok := strings.Cut(path, "/v1/responses/")
	if !ok || strings.Contains(id, "/") {
		return ""
	}
	return id
}

// readJournaled reads a request body and journals the request.
func (m *Mock) readJournaled(r *http.Request) []byte {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	m.journal.record("", r, body)
	return body
}

// mockModels are the models the mock lists.
func (m *Mock) mockModels() []string {
	return []string{m.Name + "-model-a", m.Name + "-model-b"}
}

func (m *Mock) serveModelList(w http.ResponseWriter, r *http.Request) {
	ids := m.mockModels()
	var v any
	switch {
	case strings.Contains(r.URL.Path, "/v1beta/"):
		models := make([]map[string]any, len(ids))
		for i, id := range ids {
			models[i] = map[string]any{"name": "models/" + id, "displayName": id,
				"supportedGenerationMethods": []string{"generateContent", "countTokens"}}
		}
		v = map[string]any{"models": models}
	case r.Header.Get("Anthropic-Version") != "":
		data := make([]map[string]any, len(ids))
		for i, id := range ids {
			data[i] = map[string]any{"type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z"}
		}
		v = map[string]any{"data": data, "has_more": false, "first_id": ids[0], "last_id": ids[len(ids)-1]}
	default:
		data := make([]map[string]any, len(ids))
		for i, id := range ids {
			data[i] = map[string]any{"id": id, "object": "model", "created": 1735689600, "owned_by": m.Name}
		}
		v = map[string]any{"object": "list", "data": data}
	}
	writeJSONBody(w, v)
}

func (m *Mock) serveEmbeddings(w http.ResponseWriter, body []byte) {
	var inputs []string
	in := gjson.GetBytes(body, "input")
	if in.IsArray() {
		for _, x := range in.Array() {
			inputs = append(inputs, x.Raw)
		}
	} else {
		inputs = []string{in.String()}
	}
	data := make([]map[string]any, len(inputs))
	tokens := 0
	for i, s := range inputs {
		n := len(s)
		tokens += (n + 3) / 4
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": []float64{float64(n), 0.5, -0.25}}
	}
	writeJSONBody(w, map[string]any{"object": "list", "data": data, "model": m.ModelPrefix + gjson.GetBytes(body, "model").String(),
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
}

func (m *Mock) serveCompletion(w http.ResponseWriter, r *http.Request, body []byte) {
	model := m.ModelPrefix + gjson.GetBytes(body, "model").String()
	text := fmt.Sprintf("completion of %q before %q", gjson.GetBytes(body, "prompt").String(), gjson.GetBytes(body, "suffix").String())
	usage := map[string]int{"prompt_tokens": len(body) / 4, "completion_tokens": 5, "total_tokens": len(body)/4 + 5}
	chunk := func(text string, finish any, usage any) map[string]any {
		return map[string]any{"id": "cmpl-mock", "object": "text_completion", "created": 1735689600, "model": model,
			"choices": []map[string]any{{"text": text, "index": 0, "logprobs": nil, "finish_reason": finish}}, "usage": usage}
	}
	if !gjson.GetBytes(body, "stream").Bool() {
		writeJSONBody(w, chunk(text, "stop", usage))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	half := len(text) / 2
	for _, c := range []map[string]any{chunk(text[:half], nil, nil), chunk(text[half:], "stop", usage)} {
		b, _ := json.Marshal(c)
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
		_ = http.NewResponseController(w).Flush()
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

func writeJSONBody(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
