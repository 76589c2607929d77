package caddymodule

import (
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"
	"go.uber.org/zap"

	"github.com/louter/louter/caddymodule/internal/redact"
	"github.com/louter/louter/translate"
)

// OpenAI-compatible endpoints that name a model in the body but are not
// chat calls — POST .../v1/embeddings, and POST .../v1/completions, which
// editors use for fill-in-the-middle — are routed by model like chat calls
// and passed to the route's backend untranslated: only the model rename,
// the max_tokens cap and the credential rules apply, and the answer
// (streamed or not) comes back as the backend wrote it. There is nothing to
// translate them into, so only openai_chat backends take them; for a route
// to any other backend the client gets a 400 naming the model.

// serveOpenAIPassthrough sends the request to the backend's endpoint
// (base_path + endpoint, e.g. "/embeddings"). proto is the protocol of the
// endpoint (its row's v1Endpoints name it, protocols.go), the only one
// whose backends take it; client answers the errors, in the shape the
// request's headers chose.
func (l *Louter) serveOpenAIPassthrough(w http.ResponseWriter, r *http.Request, client translate.Codec, proto translate.Protocol, endpoint string) error {
	body, e := l.readBody(r)
	if e != nil {
		return l.reject(w, client, e)
	}
	// One pass validates the body and finds the members read and edited
	// here (passthrough_body.go).
	top, te := translate.ScanTopLevel(proto, body)
	if te != nil {
		return l.reject(w, client, te)
	}
	m := top.Model
	if m.Type != gjson.String || m.Str == "" {
		return l.reject(w, client, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Message: "louter: the request names no model", Param: "model"})
	}
	model := m.Str
	route, ok := l.route(model)
	if !ok {
		return l.reject(w, client, translate.NewError(http.StatusNotFound, fmt.Sprintf("louter: no backend is configured for model %q", model)))
	}
	if !l.modelAllowed(w, r, client.Protocol(), model) {
		return nil // the client's models (client_keys.go)
	}
	b := route.backend
	if b.Protocol != proto {
		return l.reject(w, client, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Param: "model",
			Message: fmt.Sprintf("louter: model %q is served by a %s backend; /v1%s is passed only to %s backends", model, b.Protocol, endpoint, proto)})
	}
	backendModel := route.backendName(model)
	if route.Rename != "" {
		backendModel = route.Rename
	}
	body, _, te = passthroughBody(body, &top, model, backendModel, b.MaxTokens, false) // not counted: not a chat call
	if te != nil {
		return l.reject(w, client, te)
	}
	stream := top.Stream.Bool()
	// Errors are scrubbed of keys here too (secret_writer.go).
	sw := newSecretWriter(w, append(redact.ClientSecrets(r.Header, r.URL.RawQuery), b.apiKey)...)
	sw.stream = stream
	defer sw.close()
	cred, _ := rewriteRequest(r, backendRequest{backend: b, body: body, model: backendModel, stream: stream, passthrough: true})
	// rewriteRequest points at the chat endpoint; this one is another.
	setBackendPath(r.URL, b.basePath, endpoint)
	r.RequestURI = r.URL.RequestURI()

	tw := &writeTracker{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: sw}}
	uerr := b.upstream.ServeHTTP(tw, sw.collectAuthSecrets(b.attachCredential(r, cred), b, nil), nopNext)
	if !tw.wrote {
		if uerr == nil {
			uerr = fmt.Errorf("the upstream handler wrote no response")
		}
		l.logger.Error("backend request failed", zap.String("backend", b.name), zap.Error(uerr))
		return l.reject(sw, client, upstreamError(uerr, b.name))
	}
	return nil
}

// writeTracker notes whether anything was written to the client, so a
// backend that could not be reached is answered in the client's protocol.
// reverse_proxy writes the status before any body byte.
type writeTracker struct {
	*caddyhttp.ResponseWriterWrapper
	wrote bool
}

func (t *writeTracker) WriteHeader(status int) {
	if status >= 200 {
		t.wrote = true
	}
	t.ResponseWriterWrapper.WriteHeader(status)
}

func (t *writeTracker) Write(p []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriterWrapper.Write(p)
}

// Interface guard
var _ http.ResponseWriter = (*writeTracker)(nil)
