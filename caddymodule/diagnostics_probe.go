package caddymodule

import (
	"net/http"
	"net/url"
)

// probeModel is the model the diagnostics probe names to Bedrock: no
// model has that id, so the call costs nothing and runs nothing.
const probeModel = "louter-diagnostics-probe"

// probeRequest is what the diagnostics probe sends a backend: a request
// whose answer says whether the backend's credential is accepted, not just
// whether something answers.
type probeRequest struct {
	method string
	path   string // below the backend's base_path
	query  string
	body   []byte // nil: none
}

// probeRequestFor returns b's probe. Most providers serve a model list,
// GET {base_path}/models, which needs the key. Bedrock's runtime serves
// none (its model list is the control plane's, another host): a GET there
// is refused alike with good keys and bad ones, so the probe is an
// InvokeModel of a model that does not exist, which AWS authenticates
// before it looks at the model: 403 for a bad signature or unknown key,
// 400 or 404 for good ones. A classic Azure deployment API answers nothing
// without its api-version.
func probeRequestFor(b *Backend) probeRequest {
	row := rowOf(b.Protocol)
	if row.probeInvoke {
		path, _ := row.endpoint(probeModel, false)
		return probeRequest{method: http.MethodPost, path: path, body: []byte(`{}`)}
	}
	p := probeRequest{method: http.MethodGet, path: "/models", query: row.listQuery}
	if b.Azure != nil && b.Azure.APIVersion != "" {
		p.query = "api-version=" + url.QueryEscape(b.Azure.APIVersion)
	}
	return p
}

// probeAuthorized reports whether a backend's answer to its probe says
// that its credential was accepted: any answer but 401 and 403 (a 404 of a
// model list is a backend that checked the key and serves no list).
func probeAuthorized(status int) bool {
	return status != http.StatusUnauthorized && status != http.StatusForbidden
}
