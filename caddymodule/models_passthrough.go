package caddymodule

import (
	"fmt"
	"net/http"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/caddymodule/internal/redact"
)

// listModelsPassthrough is the list_models value that asks a backend for
// its own model list.
const listModelsPassthrough = "passthrough"

// maxBackendListBytes bounds a backend's model list answer.
const maxBackendListBytes = 8 << 20

// fetchBackendModels asks b for its model list, GET {base_path}/models
// through the backend's own upstream handler (so its load balancing, TLS
// and header rules apply), and returns the model ids. The request is built
// afresh: none of the client's headers go with it, only the backend's key
// (or, with pass_client_auth, the client's credential) and the protocol's
// version header. Only the first page is read.
func (l *Louter) fetchBackendModels(r *http.Request, b *Backend) ([]string, error) {
	proto := rowOf(b.Protocol)                                                            // protocols.go
	req := backendQuestion(r.Context(), r, b, http.MethodGet, "/models", proto.listQuery) // backend_call.go
	key := b.apiKey
	if b.PassClientAuth {
		if c := redact.ClientKey(r.Header, r.URL.RawQuery); c != "" {
			key = c
		}
	}
	var cred http.Header
	if key != "" {
		// Through the credential transport, like a chat request, so
		// reverse_proxy's logs never hold the key.
		cred = make(http.Header, 1)
		proto.setKey(cred, key)
	}
	cw, err := callBackend(b, b.attachCredential(req, cred), maxBackendListBytes)
	switch {
	case err != nil:
		return nil, err
	case cw.status != http.StatusOK:
		// The body is not logged: an error body may echo the key.
		return nil, fmt.Errorf("the backend answered %d", cw.status)
	case cw.overflow:
		return nil, fmt.Errorf("the backend's list exceeds %d bytes", maxBackendListBytes)
	}
	return parseModelList(proto, cw.body.Bytes())
}

// parseModelList reads the model ids of a list in a protocol's shape: the
// row's parseModelList, else {"data":[{"id"}]} (OpenAI, Anthropic).
func parseModelList(proto *protocolRow, body []byte) ([]string, error) {
	if !gjson.ValidBytes(body) {
		return nil, fmt.Errorf("the backend's model list is not JSON")
	}
	if proto.parseModelList != nil {
		return proto.parseModelList(body), nil
	}
	var ids []string
	for _, m := range gjson.GetBytes(body, "data").Array() {
		ids = append(ids, m.Get("id").String())
	}
	return ids, nil
}

// validateListing checks the listing settings: list_models values, and
// that each name a route lists matches the route's own pattern.
func (l *Louter) validateListing() []error {
	var errs []error
	for name, b := range l.Backends {
		if b != nil && b.ListModels != "" && b.ListModels != listModelsPassthrough {
			errs = append(errs, fmt.Errorf("backend %q: list_models must be %q, not %q", name, listModelsPassthrough, b.ListModels))
		}
	}
	for i, m := range l.Models {
		for _, id := range m.List {
			if !globMatch(m.Match, id) {
				errs = append(errs, fmt.Errorf("model route %d (%q): listed name %q does not match the pattern", i, m.Match, id))
			}
		}
	}
	return errs
}
