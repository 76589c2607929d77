package cloudmock

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Front is Vertex AI's and Azure OpenAI's side of the wire on loopback: it
// authenticates each request as the cloud does, checks the URL and the
// body the cloud expects, and passes the request on to a louter_mock in
// the hosted API's own shape (Anthropic Messages, the Gemini API, OpenAI
// Chat and Responses), streaming its answer back. What it refuses, it
// refuses in the cloud's error shape. It also plays Azure's content
// filter: a body containing FilterPrompt is refused with Azure's 400
// content_filter error, one containing FilterOutput is answered by the
// front itself with finish_reason content_filter; and every Azure chat
// stream starts with Azure's prompt_filter_results chunk, whose choices
// are empty.
type Front struct {
	URL  string // the front's base URL
	Mock string // the louter_mock it passes requests to

	Google     *Google // the token issuer of Vertex requests; nil: none accepted
	Project    string  // the Vertex project and location it serves
	Location   string
	ExpressKey string // Vertex express mode's API key; "": none

	Azure           *Azure // the Entra authority; nil: no bearer accepted
	AzureKey        string // the api-key it accepts; "": none
	AzureAPIVersion string // the classic API's api-version it serves

	mu       sync.Mutex
	requests []Request
}

// Request is a request the front received.
type Request struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   string
	Status                 int // what the front answered itself; 0: passed on
}

// Content filter markers.
const (
	FilterPrompt = "[azure:filter_prompt]"
	FilterOutput = "[azure:filter_output]"
)

// Start starts the front; it stops with the test.
func (f *Front) Start(t testing.TB) *Front {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// Requests returns the requests received since the last call.
func (f *Front) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.requests
	f.requests = nil
	return r
}

var (
	vertexPath  = regexp.MustCompile(`^/(v1|v1beta1)/projects/([^/]+)/locations/([^/]+)/publishers/(anthropic|google)/models/([^/:]+):([A-Za-z]+)$`)
	expressPath = regexp.MustCompile(`^/v1beta1/publishers/google/models/([^/:]+):([A-Za-z]+)$`)
	classicChat = regexp.MustCompile(`^/openai/deployments/([^/]+)/chat/completions$`)
)

func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	// Recorded before answering: the client may be done reading before
	// this handler returns. Status is what the front answers itself, told
	// before it writes.
	rec := Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: string(body)}
	sw := &statusWriter{ResponseWriter: w, front: f, rec: rec}
	f.serve(sw, r, body)
	sw.commit()
}

// statusWriter records the request when the answer's status is known:
// the front's own (a refusal) or the mock's (0).
type statusWriter struct {
	http.ResponseWriter
	front *Front
	rec   Request
	done  bool
	own   bool // the front answers itself
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.done {
		if s.own {
			s.rec.Status = code
		}
		s.commit()
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if !s.done {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap is for http.ResponseController.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// markOwn notes that the front answers w itself.
func markOwn(w http.ResponseWriter) {
	if s, ok := w.(*statusWriter); ok {
		s.own = true
	}
}

func (s *statusWriter) commit() {
	if s.done {
		return
	}
	s.done = true
	s.front.mu.Lock()
	s.front.requests = append(s.front.requests, s.rec)
	s.front.mu.Unlock()
}

// serve answers r and returns the status the front answered itself (0
// when the mock did).
func (f *Front) serve(w http.ResponseWriter, r *http.Request, body []byte) int {
	path := r.URL.Path
	if strings.HasPrefix(path, "/openai/") {
		return f.serveAzure(w, r, body)
	}
	if path == "/anthropic/v1/messages" {
		// Claude in Azure AI Foundry: the Messages API as Anthropic
		// serves it, with an Azure key or an Entra token.
		key := r.Header.Get("X-Api-Key")
		bearer, isBearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !(key != "" && key == f.AzureKey) && !(isBearer && f.Azure != nil && f.Azure.Valid(bearer)) {
			return azureError(w, http.StatusUnauthorized, "401", "Access denied due to invalid subscription key or wrong API endpoint.", "")
		}
		return f.pass(w, r, "/v1/messages", "", body)
	}
	if m := expressPath.FindStringSubmatch(path); m != nil {
		if f.ExpressKey == "" || r.Header.Get("X-Goog-Api-Key") != f.ExpressKey {
			return googleError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "API keys are not supported by this API. Expected OAuth2 access token or other authentication credentials that assert a principal.")
		}
		return f.pass(w, r, "/v1beta/models/"+m[1]+":"+m[2], r.URL.RawQuery, body)
	}
	m := vertexPath.FindStringSubmatch(path)
	if m == nil {
		return googleError(w, http.StatusNotFound, "NOT_FOUND", "The requested URL "+path+" was not found on this server.")
	}
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || f.Google == nil || !f.Google.Valid(auth) {
		return googleError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
	}
	if m[2] != f.Project || m[3] != f.Location {
		return googleError(w, http.StatusForbidden, "PERMISSION_DENIED", "Permission denied on resource project "+m[2]+" in location "+m[3]+".")
	}
	publisher, model, method := m[4], m[5], m[6]
	if publisher == "google" {
		if method != "generateContent" && method != "streamGenerateContent" {
			return googleError(w, http.StatusNotFound, "NOT_FOUND", "method "+method)
		}
		return f.pass(w, r, "/v1beta/models/"+model+":"+method, r.URL.RawQuery, body)
	}
	// Claude: rawPredict or streamRawPredict, Vertex's body.
	stream := gjson.GetBytes(body, "stream").Bool()
	switch {
	case method != "rawPredict" && method != "streamRawPredict":
		return googleError(w, http.StatusNotFound, "NOT_FOUND", "method "+method)
	case gjson.GetBytes(body, "model").Exists():
		return anthropicError(w, "model: Extra inputs are not permitted")
	case gjson.GetBytes(body, "anthropic_version").Str != "vertex-2023-10-16":
		return anthropicError(w, "anthropic_version: vertex-2023-10-16 is required")
	case stream != (method == "streamRawPredict"):
		return anthropicError(w, "stream does not match "+method)
	}
	body, _ = sjson.SetBytes(body, "model", model)
	body, _ = sjson.DeleteBytes(body, "anthropic_version")
	return f.pass(w, r, "/v1/messages", "", body)
}

func (f *Front) serveAzure(w http.ResponseWriter, r *http.Request, body []byte) int {
	key := r.Header.Get("Api-Key")
	bearer, isBearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case key != "" && f.AzureKey != "" && key == f.AzureKey:
	case isBearer && f.Azure != nil && f.Azure.Valid(bearer):
	default:
		return azureError(w, http.StatusUnauthorized, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.", "")
	}
	path := r.URL.Path
	var target string
	switch {
	case path == "/openai/v1/chat/completions":
		target = "/v1/chat/completions"
	case path == "/openai/v1/responses":
		target = "/v1/responses"
	case classicChat.MatchString(path), path == "/openai/responses":
		if v := r.URL.Query().Get("api-version"); v != f.AzureAPIVersion {
			return azureError(w, http.StatusNotFound, "404", "Resource not found (api-version "+v+")", "")
		}
		if m := classicChat.FindStringSubmatch(path); m != nil {
			body, _ = sjson.SetBytes(body, "model", m[1])
			target = "/v1/chat/completions"
		} else {
			target = "/v1/responses"
		}
	default:
		return azureError(w, http.StatusNotFound, "404", "Resource not found", "")
	}
	if bytes.Contains(body, []byte(FilterPrompt)) {
		return azureError(w, http.StatusBadRequest, "content_filter", "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.", "ResponsibleAIPolicyViolation")
	}
	if target == "/v1/chat/completions" && bytes.Contains(body, []byte(FilterOutput)) {
		return azureFilteredOutput(w, gjson.GetBytes(body, "stream").Bool())
	}
	return f.pass(w, r, target, "", body)
}

// pass sends the request to the mock at path and copies its answer,
// flushing as it comes.
func (f *Front) pass(w http.ResponseWriter, r *http.Request, path, query string, body []byte) int {
	u := f.Mock + path
	if query != "" {
		u += "?" + query
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return http.StatusInternalServerError
	}
	for k, v := range r.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Authorization", "Api-Key", "X-Goog-Api-Key", "Content-Length", "Accept-Encoding":
		default:
			req.Header[k] = v
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return http.StatusBadGateway
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	if strings.HasPrefix(r.URL.Path, "/openai/") && path == "/v1/chat/completions" && resp.StatusCode == http.StatusOK &&
		strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		_, _ = io.WriteString(w, "data: "+azurePromptFilterChunk+"\n\n")
	}
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
			_ = rc.Flush()
		}
		if err != nil {
			return 0
		}
	}
}

const safeFilterResults = `{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}`

// azurePromptFilterChunk is the first chunk of an Azure chat stream.
const azurePromptFilterChunk = `{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":` + safeFilterResults + `}]}`

// azureFilteredOutput answers as Azure does when the output is filtered:
// the text so far, then finish_reason content_filter.
func azureFilteredOutput(w http.ResponseWriter, stream bool) int {
	markOwn(w)
	const filtered = `{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":true,"severity":"high"}}`
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-azf","object":"chat.completion","created":1760000000,"model":"gpt-4o-2024-11-20",`+
			`"prompt_filter_results":[{"prompt_index":0,"content_filter_results":`+safeFilterResults+`}],`+
			`"choices":[{"index":0,"finish_reason":"content_filter","message":{"role":"assistant","content":"The story begins"},"content_filter_results":`+filtered+`}],`+
			`"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`)
		return http.StatusOK
	}
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	for _, c := range []string{
		azurePromptFilterChunk,
		`{"id":"chatcmpl-azf","object":"chat.completion.chunk","created":1760000000,"model":"gpt-4o-2024-11-20","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"content_filter_results":{}}]}`,
		`{"id":"chatcmpl-azf","object":"chat.completion.chunk","created":1760000000,"model":"gpt-4o-2024-11-20","choices":[{"index":0,"delta":{"content":"The story begins"},"finish_reason":null,"content_filter_results":` + safeFilterResults + `}]}`,
		`{"id":"chatcmpl-azf","object":"chat.completion.chunk","created":1760000000,"model":"gpt-4o-2024-11-20","choices":[{"index":0,"finish_reason":null,"content_filter_offsets":{"check_offset":0,"start_offset":0,"end_offset":16},"content_filter_results":` + safeFilterResults + `}]}`,
		`{"id":"chatcmpl-azf","object":"chat.completion.chunk","created":1760000000,"model":"gpt-4o-2024-11-20","choices":[{"index":0,"delta":{},"finish_reason":"content_filter","content_filter_results":` + filtered + `}]}`,
		`{"id":"chatcmpl-azf","object":"chat.completion.chunk","created":1760000000,"model":"gpt-4o-2024-11-20","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`,
	} {
		_, _ = io.WriteString(w, "data: "+c+"\n\n")
		_ = rc.Flush()
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	return http.StatusOK
}

func googleError(w http.ResponseWriter, code int, status, msg string) int {
	markOwn(w)
	b, _ := sjson.SetBytes(nil, "error.code", code)
	b, _ = sjson.SetBytes(b, "error.message", msg)
	b, _ = sjson.SetBytes(b, "error.status", status)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
	return code
}

func anthropicError(w http.ResponseWriter, msg string) int {
	markOwn(w)
	b, _ := sjson.SetBytes([]byte(`{"type":"error","error":{"type":"invalid_request_error"}}`), "error.message", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(b)
	return http.StatusBadRequest
}

func azureError(w http.ResponseWriter, status int, code, msg, inner string) int {
	markOwn(w)
	b, _ := sjson.SetBytes(nil, "error.code", code)
	b, _ = sjson.SetBytes(b, "error.message", msg)
	if inner != "" {
		b, _ = sjson.SetBytes(b, "error.param", "prompt")
		b, _ = sjson.SetBytes(b, "error.status", status)
		b, _ = sjson.SetBytes(b, "error.innererror.code", inner)
		b, _ = sjson.SetRawBytes(b, "error.innererror.content_filter_result", []byte(`{"hate":{"filtered":false,"severity":"safe"},"jailbreak":{"filtered":true,"detected":true},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}`))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	return status
}
