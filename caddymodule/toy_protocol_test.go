package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/limits"
	"github.com/louter/louter/translate"
)

// toyProtocol exists only in tests: the fake codec's wire format
// (fake_codec_test.go) with a whole protocol row of its own, registered
// here and nowhere else, so the integration tests
// (integration_toy_protocol_test.go) can serve it through a real Caddy as
// a client protocol and as a backend protocol. If serving it needs an edit
// of a production file, the protocol row is missing a field.
//
// Its API lives under .../toy/v1/:
//
//	POST chat          a chat call (the fake request; "stream" in the body)
//	POST count         token counting            → {"p":"toy","tokens":N}
//	GET  models        the model list            → {"p":"toy","toy_models":[{"name","backend"}]}
//	GET  models/{id}   one model                 → {"p":"toy","name","backend"}
//
// Its backends take the key in X-Toy-Key and Toy-Version on every request
// louter builds, and list their models at GET /toy/v1/models?all=1 as
// {"toy_models":[{"name"}]}.
const toyProtocol translate.Protocol = "toy"

// toyKeepalive is the frame louter writes to a toy client's idle stream.
const toyKeepalive = "event: keepalive\ndata: {}\n\n"

func init() {
	translate.Register(fakeCodec{toyProtocol})
	registerProtocol(&protocolRow{
		protocol:    toyProtocol,
		classify:    classifyToy,
		keepalive:   []byte(toyKeepalive),
		listModels:  serveToyList,
		modelInfo:   func(m listedModel) any { return toyModel{P: toyProtocol, Name: m.id, Backend: m.backend} },
		modelPrefix: "toys/",
		countAnswer: func(n, _ int) []byte { return []byte(`{"p":"toy","tokens":` + strconv.Itoa(n) + `}`) },
		keyMissing:  "toy: no key",
		keyInvalid:  "toy: not a toy key",
		rateLimitHeaders: func(h http.Header, k limits.Kind, win limits.Window, _ time.Time) {
			h.Set("Toy-Remaining-"+string(k), strconv.FormatInt(win.Remaining, 10))
		},
		ownHeaders:      headerSet("Toy-Beta"),
		passAuthHeaders: headerSet("Authorization"),
		bodyParams:      bodyParamPaths{maxTokens: []string{"max_tokens"}},
		endpoint:        func(string, bool) (string, string) { return "/chat", "" },
		setKey:          func(h http.Header, key string) { h.Set("X-Toy-Key", key) },
		prepare:         func(h http.Header) { h.Set("Toy-Version", "1") },
		defaultBasePath: "/toy/v1",
		listQuery:       "all=1",
		parseModelList: func(body []byte) []string {
			var ids []string
			for _, m := range gjson.GetBytes(body, "toy_models").Array() {
				ids = append(ids, m.Get("name").String())
			}
			return ids
		},
		counter: &backendCounter{
			path: func(string) string { return "/count" },
			body: func(c translate.Codec, req *translate.Request) ([]byte, error) { return c.EncodeRequest(req) },
			read: func(answer []byte) (int, bool) {
				v := gjson.GetBytes(answer, "tokens")
				return int(v.Int()), v.Type == gjson.Number
			},
		},
		recordedPrefixes: []string{"Toy-"},
	})
}

// classifyToy is the toy row's classify: everything under .../toy/v1/.
func classifyToy(r *http.Request, path string) (apiRequest, bool) {
	i := strings.Index(path, "/toy/v1/")
	if i < 0 {
		return apiRequest{}, false
	}
	rest := path[i+len("/toy/v1/"):]
	req := apiRequest{api: "/toy/v1/" + rest, apiEndpoint: apiEndpoint{protocol: toyProtocol, action: actNotServed}}
	switch {
	case rest == "chat":
		req.apiEndpoint, req.client = apiEndpoint{toyProtocol, actChat, http.MethodPost}, toyProtocol
	case rest == "count":
		req.apiEndpoint, req.client = apiEndpoint{toyProtocol, actElsewhere, http.MethodPost}, toyProtocol
	case rest == "models":
		req.action, req.method = actListModels, http.MethodGet
	case strings.HasPrefix(rest, "models/"):
		if model, ok := unescapeModel(strings.TrimPrefix(rest, "models/")); ok {
			req.action, req.method, req.model = actGetModel, http.MethodGet, model
		}
	}
	return req, true
}

// toyModel is the toy API's model object.
type toyModel struct {
	P       translate.Protocol `json:"p"`
	Name    string             `json:"name"`
	Backend string             `json:"backend"`
}

// serveToyList is the toy row's listModels: every model, one page.
func serveToyList(l *Louter, w http.ResponseWriter, r *http.Request, codec translate.Codec, models []listedModel) error {
	out := struct {
		P      translate.Protocol `json:"p"`
		Models []toyModel         `json:"toy_models"`
	}{P: toyProtocol, Models: make([]toyModel, len(models))}
	for i, m := range models {
		out.Models[i] = toyModel{P: toyProtocol, Name: m.id, Backend: m.backend}
	}
	return writeJSON(w, http.StatusOK, out)
}

// TestToyRefusals checks the refusals louter words itself from the toy
// row: the 401s of client keys and a limit's 429 with the row's rate-limit
// headers, in the toy codec's error shape.
func TestToyRefusals(t *testing.T) {
	for _, tt := range []struct {
		why  authResult
		want string
	}{{authMissing, "toy: no key"}, {authInvalid, "toy: not a toy key"}} {
		w := httptest.NewRecorder()
		writeAuthError(w, toyProtocol, tt.why, "")
		if got := gjson.Get(w.Body.String(), "error.message").String(); w.Code != http.StatusUnauthorized || got != tt.want || gjson.Get(w.Body.String(), "p").String() != "toy" {
			t.Errorf("auth %v: %d %s, want 401 %q", tt.why, w.Code, w.Body, tt.want)
		}
	}
	w := httptest.NewRecorder()
	writeLimitError(w, toyProtocol, &limits.Refusal{Kind: limits.KindRequests, Window: limits.Window{Limit: 5, Remaining: 0, Reset: time.Now().Add(time.Minute)}, RetryAfter: time.Minute})
	if w.Code != http.StatusTooManyRequests || gjson.Get(w.Body.String(), "p").String() != "toy" ||
		w.Header().Get("Toy-Remaining-"+string(limits.KindRequests)) != "0" || w.Header().Get("Retry-After") != "60" {
		t.Errorf("limit: %d %v %s", w.Code, w.Header(), w.Body)
	}
}
