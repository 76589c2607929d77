package caddymodule

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/louter/louter/translate"
)

// backendProtocol is what louter needs to know to address a backend of one
// protocol. A protocol that can serve as a backend adds a row to
// backendProtocols.
type backendProtocol struct {
	// endpoint returns the chat endpoint below the backend's base path,
	// escaped (a model name in it is data: escapeModelPath), and
	// the query a translated request carries (Gemini puts the model and the
	// stream mode into the URL).
	endpoint func(model string, stream bool) (path, rawQuery string)
	// setKey puts an API key into the header the protocol reads it from.
	setKey func(h http.Header, key string)
	// prepare sets the protocol's own headers on a translated request.
	prepare func(h http.Header)
	// defaultBasePath replaces the usual /v1 when a backend sets no
	// base_path (Gemini's API lives under /v1beta).
	defaultBasePath string
}

var backendProtocols = map[translate.Protocol]backendProtocol{
	translate.ProtocolAnthropic: {
		endpoint: func(string, bool) (string, string) { return "/messages", "" },
		setKey:   func(h http.Header, key string) { h.Set("X-Api-Key", key) },
		prepare: func(h http.Header) {
			if h.Get("Anthropic-Version") == "" {
				h.Set("Anthropic-Version", anthropicVersion)
			}
		},
	},
	translate.ProtocolOpenAIChat: {
		endpoint: func(string, bool) (string, string) { return "/chat/completions", "" },
		setKey:   func(h http.Header, key string) { h.Set("Authorization", "Bearer "+key) },
		prepare:  func(http.Header) {},
	},
	translate.ProtocolOpenAIResponses: {
		endpoint: func(string, bool) (string, string) { return "/responses", "" },
		setKey:   func(h http.Header, key string) { h.Set("Authorization", "Bearer "+key) },
		prepare:  func(http.Header) {},
	},
	translate.ProtocolGemini: {
		endpoint:        geminiBackendEndpoint,
		setKey:          func(h http.Header, key string) { h.Set("X-Goog-Api-Key", key) },
		prepare:         func(http.Header) {},
		defaultBasePath: "/v1beta",
	},
}

// anthropicVersion is the Messages API version louter's Anthropic codec
// speaks; the API rejects requests without one.
const anthropicVersion = "2023-06-01"

// backendRequest describes the request to send to a backend.
type backendRequest struct {
	backend     *Backend
	body        []byte
	model       string // the model the backend is asked for
	stream      bool   // whether the client asked for a stream
	passthrough bool   // client and backend speak the same protocol
}

// rewriteRequest turns the client's request into the backend's: body, path,
// query, credentials and protocol headers. It modifies r in place, because
// reverse_proxy needs Caddy's own request (its context carries the replacer
// and the vars).
func rewriteRequest(r *http.Request, br backendRequest) {
	b := br.backend
	proto := backendProtocols[b.Protocol]
	h := r.Header

	setBody(r, br.body)

	path, query := proto.endpoint(br.model, br.stream)
	setBackendPath(r.URL, b.basePath, path) // model_name.go: the endpoint is escaped

	// The credential to send, when the client's own is forwarded.
	var cred string
	if b.PassClientAuth {
		cred = clientCredential(r)
	}

	if br.passthrough {
		// The client already speaks the backend's protocol: keep its
		// query (Anthropic's ?beta=true) and headers, except credentials.
		if !b.PassClientAuth {
			stripCredentials(h)
			r.URL.RawQuery = removeQueryParam(r.URL.RawQuery, "key")
			if b.apiKey != "" {
				proto.setKey(h, b.apiKey)
			}
		} else if cred == "" && b.apiKey != "" {
			proto.setKey(h, b.apiKey)
		}
	} else {
		// A translated request: nothing of the client's protocol may reach
		// the backend, neither its query, its credential headers nor its
		// version and SDK headers.
		r.URL.RawQuery = query
		stripCredentials(h)
		stripProtocolHeaders(h)
		if cred == "" {
			cred = b.apiKey
		}
		if cred != "" {
			proto.setKey(h, cred)
		}
		proto.prepare(h)
		h.Set("Content-Type", "application/json")
		if br.stream {
			h.Set("Accept", "text/event-stream")
		} else {
			h.Set("Accept", "application/json")
		}
	}
	r.RequestURI = r.URL.RequestURI()

	// Without the client's Accept-Encoding, Go's transport asks for gzip
	// itself and decompresses the answer, so the translator always reads
	// plain text.
	h.Del("Accept-Encoding")
	// RFC 10036 incremental requests conflict with reverse_proxy's
	// request_buffers (a 501), which retries need; louter has the whole
	// body anyway.
	h.Del("Incremental")
	// The body is already read: there is nothing left to wait for.
	h.Del("Expect")
}

// setBody replaces the request body, keeping every length field consistent
// so the backend receives a Content-Length, never a stale chunked encoding.
func setBody(r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body))) // for logs and other handlers; the transport uses ContentLength
	r.TransferEncoding = nil
	r.Header.Del("Content-Encoding") // only identity bodies get here
}

// clientCredential returns the API key the client sent, in whichever
// protocol's place it sent it.
func clientCredential(r *http.Request) string {
	if v := r.Header.Get("X-Api-Key"); v != "" {
		return v
	}
	if v := r.Header.Get("Authorization"); len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		return strings.TrimSpace(v[7:])
	}
	if v := r.Header.Get("X-Goog-Api-Key"); v != "" {
		return v
	}
	if r.URL.RawQuery != "" {
		return r.URL.Query().Get("key")
	}
	return ""
}

// stripCredentials removes every header a client of any protocol sends its
// API key in.
func stripCredentials(h http.Header) {
	h.Del("X-Api-Key")
	h.Del("Authorization")
	h.Del("X-Goog-Api-Key")
}

// stripProtocolHeaders removes the version, beta and SDK headers of every
// client protocol: they mean nothing (or something wrong) to a backend of
// another protocol.
func stripProtocolHeaders(h http.Header) {
	for k := range h {
		switch {
		case strings.HasPrefix(k, "Anthropic-"),
			strings.HasPrefix(k, "Openai-"),
			strings.HasPrefix(k, "X-Stainless-"),
			strings.HasPrefix(k, "X-Goog-"):
			delete(h, k)
		}
	}
}

// removeQueryParam drops every name=value pair of the raw query whose name
// is name, keeping the other pairs byte for byte and in order.
func removeQueryParam(raw, name string) string {
	if raw == "" {
		return raw
	}
	var out strings.Builder
	for pair := range strings.SplitSeq(raw, "&") {
		k, _, _ := strings.Cut(pair, "=")
		if uk, err := url.QueryUnescape(k); err == nil && uk == name {
			continue
		}
		if out.Len() > 0 {
			out.WriteByte('&')
		}
		out.WriteString(pair)
	}
	return out.String()
}
