package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// Google Vertex AI serves Claude and Gemini under one URL scheme,
//
//	https://{host}/v1/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method}
//
// and differs from the Anthropic and Gemini APIs in three ways, bridged so:
//
//   - The project and location are in the URL: the backend's vertex
//     settings put them into its base path, and the location chooses the
//     host of the upstream louter makes when the backend names none
//     (vertexHost).
//   - Claude is called through rawPredict / streamRawPredict with the
//     model in the URL and the Messages body without "model" and with
//     anthropic_version "vertex-2023-10-16" (the vertex_anthropic codec,
//     translate/cloud_codecs.go).
//   - Authentication is an OAuth2 access token from Google's credentials
//     (the auth google module, package auth/google), not an API key; Gemini's
//     express mode alone takes an API key, at /v1beta1/publishers/google
//     without project or location.
//
// Model names are Vertex's own: claude-sonnet-4-5@20250929,
// gemini-2.5-pro; a route's rename maps a client's names onto them.

// VertexSettings says where a Vertex AI backend's API lives.
type VertexSettings struct {
	// The Google Cloud project ID the requests are billed to, e.g.
	// "my-project". Required, except for a vertex_gemini backend in
	// express mode (an api_key and no project).
	Project string `json:"project,omitempty"`

	// The location: "global" (the default), a multi-region ("us", "eu"),
	// or a region such as "us-east5" or "europe-west1". It chooses the
	// host of the default upstream: aiplatform.googleapis.com for global,
	// aiplatform.{us,eu}.rep.googleapis.com for a multi-region,
	// {region}-aiplatform.googleapis.com otherwise.
	Location string `json:"location,omitempty"`

	// The API version in the path: "v1" (the default) or "v1beta1".
	// Express mode always uses v1beta1.
	APIVersion string `json:"api_version,omitempty"`
}

func init() {
	registerProtocol(&protocolRow{
		protocol: translate.ProtocolVertexAnthropic,
		endpoint: vertexAnthropicEndpoint,
		betas:    vertexBetas, // anthropic_betas.go
		// Never used with a key: configure refuses api_key and
		// pass_client_auth, as Claude on Vertex takes OAuth tokens only.
		setKey:           setBearer,
		configure:        configureVertex,
		defaultUpstream:  vertexUpstream,
		modelInURL:       true,
		tokenFraming:     tokencount.Anthropic,
		provider:         semconv.GenAIProviderNameGCPVertexAI,
		recordedPrefixes: []string{"X-Goog-", "Anthropic-"},
	})
	registerProtocol(&protocolRow{
		protocol: translate.ProtocolVertexGemini,
		endpoint: vertexGeminiEndpoint,
		// Express mode's API key, in Google's header.
		setKey:           func(h http.Header, key string) { h.Set("X-Goog-Api-Key", key) },
		configure:        configureVertex,
		defaultUpstream:  vertexUpstream,
		modelInURL:       true,
		tokenFraming:     tokencount.Gemini,
		provider:         semconv.GenAIProviderNameGCPVertexAI,
		recordedPrefixes: []string{"X-Goog-"},
	})
}

// vertexAnthropicEndpoint is Claude's endpoint below the location.
func vertexAnthropicEndpoint(model string, stream bool) (string, string) {
	method := ":rawPredict"
	if stream {
		method = ":streamRawPredict"
	}
	return "/publishers/anthropic/models/" + escapeModelPath(model) + method, ""
}

// vertexGeminiEndpoint is Gemini's endpoint below the location: the
// Gemini API's methods, and SSE for a stream as geminiBackendEndpoint asks.
func vertexGeminiEndpoint(model string, stream bool) (string, string) {
	path, query := geminiBackendEndpoint(model, stream)
	return "/publishers/google" + path, query
}

// vertexName is what a project or location may be: letters, digits and
// hyphens (project IDs also allow the "domain.com:" prefix of legacy
// projects), nothing a path could be steered with.
var (
	vertexProjectRE  = regexp.MustCompile(`^([a-z][a-z0-9.-]*[a-z0-9]:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
	vertexLocationRE = regexp.MustCompile(`^[a-z][a-z0-9-]*[a-z0-9]$`)
)

// configureVertex is the Vertex rows' configure: it checks the vertex
// settings and sets the base path to the project's location.
func configureVertex(b *Backend) error {
	if b.BasePath != "" {
		return fmt.Errorf("base_path does not apply to %s backends: the vertex settings (project, location) make the path", b.Protocol)
	}
	if b.ListModels != "" {
		return fmt.Errorf("list_models does not apply to %s backends: Vertex AI has no model list for publisher models; list the models in the routes", b.Protocol)
	}
	v := b.Vertex
	if v == nil {
		v = new(VertexSettings)
	}
	express := v.Project == "" && b.APIKey != ""
	if b.APIKey != "" || b.PassClientAuth {
		if b.Protocol != translate.ProtocolVertexGemini {
			return fmt.Errorf("%s takes no API key: authenticate with auth google", b.Protocol)
		}
		if v.Project != "" || v.Location != "" {
			return fmt.Errorf("an api_key is Vertex AI express mode, which names no project or location; remove them, or use auth google")
		}
	}
	if express || b.PassClientAuth {
		if v.APIVersion != "" && v.APIVersion != "v1beta1" {
			return fmt.Errorf("vertex api_version %q: express mode is served at v1beta1 only", v.APIVersion)
		}
		b.basePath = "/v1beta1"
		return nil
	}
	if len(b.AuthRaw) == 0 {
		return fmt.Errorf("%s needs auth google (Application Default Credentials or a service account key)", b.Protocol)
	}
	switch {
	case v.Project == "":
		return fmt.Errorf("vertex project is required (the Google Cloud project ID)")
	case !vertexProjectRE.MatchString(v.Project):
		return fmt.Errorf("vertex project %q is not a Google Cloud project ID (6 to 30 lowercase letters, digits and hyphens)", v.Project)
	}
	loc := vertexLocation(v)
	if !vertexLocationRE.MatchString(loc) {
		return fmt.Errorf("vertex location %q is not a location (global, us, eu, or a region such as us-east5)", loc)
	}
	version := v.APIVersion
	switch version {
	case "":
		version = "v1"
	case "v1", "v1beta1":
	default:
		return fmt.Errorf("vertex api_version %q: want v1 or v1beta1", version)
	}
	b.basePath = "/" + version + "/projects/" + v.Project + "/locations/" + loc
	return nil
}

// vertexLocation is the configured location, global by default.
func vertexLocation(v *VertexSettings) string {
	if v == nil || v.Location == "" {
		return "global"
	}
	return v.Location
}

// vertexHost is the API host of a location.
func vertexHost(location string) string {
	switch location {
	case "global":
		return "aiplatform.googleapis.com"
	case "us", "eu":
		return "aiplatform." + location + ".rep.googleapis.com"
	}
	return location + "-aiplatform.googleapis.com"
}

// vertexUpstream is the Vertex rows' defaultUpstream: a stock
// reverse_proxy to the location's host, over HTTPS.
func vertexUpstream(b *Backend) (json.RawMessage, error) {
	loc := vertexLocation(b.Vertex)
	if b.Vertex == nil || b.Vertex.Project == "" {
		loc = "global" // express mode
	}
	return defaultHTTPSUpstream(vertexHost(loc))
}

// defaultHTTPSUpstream is the reverse_proxy the Caddyfile line
// "reverse_proxy https://{host}" makes (TLS, and the Host header set to
// the upstream's).
func defaultHTTPSUpstream(host string) (json.RawMessage, error) {
	tokens, err := caddyfile.Tokenize([]byte("reverse_proxy https://"+host), "")
	if err != nil {
		return nil, err
	}
	d := caddyfile.NewDispenser(tokens)
	d.Next() // on "reverse_proxy", as unmarshalReverseProxy expects
	return unmarshalReverseProxy(d, nil)
}

// unmarshalVertex parses a backend's vertex block; the dispenser is on
// "vertex".
//
//	vertex {
//		project     <id>
//		location    <location>
//		api_version v1|v1beta1
//	}
func unmarshalVertex(d *caddyfile.Dispenser) (*VertexSettings, error) {
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	v := new(VertexSettings)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var dst *string
		switch d.Val() {
		case "project":
			dst = &v.Project
		case "location":
			dst = &v.Location
		case "api_version":
			dst = &v.APIVersion
		default:
			return nil, d.Errf("unrecognized vertex setting '%s'", d.Val())
		}
		if !d.AllArgs(dst) {
			return nil, d.ArgErr()
		}
		*dst = strings.TrimSpace(*dst)
	}
	return v, nil
}

// checkVertexSettings refuses vertex settings on a backend of a protocol
// that does not read them (Validate), rather than ignoring them.
func checkVertexSettings(b *Backend) error {
	if b.Vertex != nil && b.Protocol != translate.ProtocolVertexAnthropic && b.Protocol != translate.ProtocolVertexGemini {
		return fmt.Errorf("vertex settings apply to vertex_anthropic and vertex_gemini backends only, not %q", b.Protocol)
	}
	return nil
}
