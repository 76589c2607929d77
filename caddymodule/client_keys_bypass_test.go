package caddymodule

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/translate"
)

// With a key table configured, a request louter serves is authenticated:
// whatever its path, a request without a valid key either goes to the
// next handler untouched or gets a refusal, and never reaches a backend.
// The shapes below are the path tricks outside testing used to reach a
// backend with no key (a second ".../v1beta/models/" behind another
// resource, doubled slashes, dot segments, escapes, a leading prefix),
// combined with every endpoint louter serves.

// bypassLouter is a louter with a key table and a counting backend of each
// protocol, every model routed.
func bypassLouter(t testing.TB) (*Louter, *int) {
	t.Helper()
	hits := new(int)
	backend := func(w http.ResponseWriter, r *http.Request) error {
		*hits++
		return proxyLike(http.StatusOK, http.Header{"Content-Type": {"application/json"}}, `{}`)(w, r)
	}
	l := &Louter{
		Backends: map[string]*Backend{
			"anthropic": {Protocol: translate.ProtocolAnthropic},
			"chat":      {Protocol: translate.ProtocolOpenAIChat},
			"responses": {Protocol: translate.ProtocolOpenAIResponses},
			"gemini":    {Protocol: translate.ProtocolGemini},
		},
		Models: []ModelRoute{
			{Match: "a*", Backend: "anthropic"},
			{Match: "r*", Backend: "responses"},
			{Match: "g*", Backend: "gemini"},
			{Match: "*", Backend: "chat"},
		},
		ClientAccess: ClientAccess{Clients: []*ClientKey{{Name: "alice", KeySHA256: sha256HexForTest("alice-key")}}},
	}
	up := map[string]caddyhttp.MiddlewareHandler{}
	for name := range l.Backends {
		up[name] = upstreamFunc(backend)
	}
	return newLouter(t, l, up), hits
}

// bypassCheck serves one request and fails the test when a backend was
// asked, or when louter answered it with anything but a refusal.
func bypassCheck(t testing.TB, l *Louter, hits *int, method, target string, header http.Header) {
	t.Helper()
	if _, err := url.ParseRequestURI(target); err != nil || strings.ContainsAny(target, " \r\n\t#") {
		return // not a request line a server would hand over
	}
	r := safeRequest(method, target)
	if r == nil {
		return
	}
	for k, v := range header {
		r.Header[k] = v
	}
	before := *hits
	next := &nextRecorder{}
	w := newFlushRecorder()
	_ = l.ServeHTTP(w, r, next)
	if *hits != before {
		t.Fatalf("%s %s (%v) reached a backend without a valid key", method, target, header)
	}
	if !next.called && w.Code < 400 {
		t.Fatalf("%s %s (%v) answered %d without a valid key: %s", method, target, header, w.Code, w.Body)
	}
}

const bypassBody = `{"model":"m","messages":[{"role":"user","content":"hi"}],"contents":[{"parts":[{"text":"hi"}]}],"input":"hi","max_tokens":5}`

// safeRequest is newRequest, or nil for a target httptest cannot parse.
func safeRequest(method, target string) (r *http.Request) {
	defer func() {
		if recover() != nil {
			r = nil
		}
	}()
	return newRequest(method, target, bypassBody)
}

// bypassPaths combines prefixes, API paths and model methods.
func bypassPaths() []string {
	prefixes := []string{"", "/zz", "/v1beta/x", "/v1/x", "/v1beta/files", "/v1beta/tunedModels/t", "/v1/chat", "/a/..", "/%2e%2e", "/.", "//", "/v1beta/x/"}
	models := []string{"/v1beta/models/", "/v1/models/", "//v1beta//models/", "/v1beta/models//", "/v1beta/%6dodels/", "/v1beta/./models/", "/V1beta/models/"}
	names := []string{"g1", "a1", "m", "g1%2Fx", "..%2Fg1"}
	verbs := []string{":generateContent", ":streamGenerateContent?alt=sse", ":streamGenerateContent", ":countTokens", "%3AgenerateContent", ":generateContent/", ""}
	v1 := []string{"/v1/messages", "/v1/chat/completions", "/v1/responses", "/v1/messages/count_tokens", "/v1/models", "/v1/models/m", "/v1/embeddings", "/v1/completions", "/v1//messages", "/v1/messages/", "/v1/%6dessages", "/chat/completions", "/v1beta/models"}
	var out []string
	for _, p := range prefixes {
		for _, m := range models {
			for _, n := range names {
				for _, v := range verbs {
					out = append(out, p+m+n+v)
				}
			}
		}
		for _, v := range v1 {
			out = append(out, p+v, p+v+"?key=wrong", p+v+"/v1beta/models/g1:generateContent")
		}
	}
	return out
}

func TestKeyTableNoBypass(t *testing.T) {
	l, hits := bypassLouter(t)
	headers := []http.Header{
		nil,
		{"X-Api-Key": {"wrong"}},
		{"Authorization": {"Bearer wrong"}},
		{"X-Goog-Api-Key": {"wrong"}},
		{"Anthropic-Version": {"2023-06-01"}},
	}
	paths := bypassPaths()
	for _, target := range paths {
		for _, method := range []string{"POST", "GET"} {
			for _, h := range headers {
				bypassCheck(t, l, hits, method, target, h)
			}
		}
	}
	// The harness sees serving: the same louter, with the key, reaches a
	// backend on the plain paths.
	for _, target := range []string{"/v1/messages", "/v1beta/models/g1:generateContent", "/zz/v1beta/models/g1:streamGenerateContent?alt=sse", "/v1/responses"} {
		before := *hits
		r := newRequest("POST", target, bypassBody)
		r.Header.Set("X-Api-Key", "alice-key")
		r.Header.Set("X-Goog-Api-Key", "alice-key")
		_ = l.ServeHTTP(newFlushRecorder(), r, &nextRecorder{})
		if *hits == before {
			t.Errorf("%s with the key did not reach a backend: the check above proves nothing", target)
		}
	}
	t.Logf("%d paths × 2 methods × %d header sets", len(paths), len(headers))
}

// FuzzKeyTableNoBypass: any path, method and credential header that is
// not alice's key is never served by a backend.
func FuzzKeyTableNoBypass(f *testing.F) {
	for i, p := range bypassPaths() {
		if i%60 == 0 { // a sample of the table above as the seed corpus (each seed costs CI time before fuzzing starts)
			f.Add("POST", p, "")
		}
	}
	f.Add("POST", "/v1beta/x/v1beta/models/g1:generateContent", "wrong")
	f.Add("POST", "//v1beta/x//v1beta/models/g1:countTokens", "")
	l, hits := bypassLouter(f)
	f.Fuzz(func(t *testing.T, method, target, key string) {
		if strings.Contains(key, "alice-key") || !validMethod(method) {
			return
		}
		h := http.Header{}
		if key != "" {
			h.Set("X-Api-Key", key)
			h.Set("X-Goog-Api-Key", key)
			h.Set("Authorization", "Bearer "+key)
		}
		if strings.Contains(target, "alice-key") {
			return
		}
		bypassCheck(t, l, hits, method, target, h)
	})
}

func validMethod(m string) bool {
	if m == "" || len(m) > 16 {
		return false
	}
	for _, c := range m {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}
