package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// Azure OpenAI serves OpenAI's Chat Completions and Responses APIs and
// differs from OpenAI's in three ways, bridged so:
//
//   - Two URL schemes: the v1 API, https://{resource}.openai.azure.com/openai/v1/chat/completions
//     (and /responses), where "model" is the deployment name, and the
//     classic deployment API, /openai/deployments/{deployment}/chat/completions?api-version=…
//     (Responses: /openai/responses?api-version=…, the deployment in
//     "model"). The backend's azure settings choose: an api_version means
//     the classic API.
//   - The key goes in an api-key header, or an Entra ID bearer token
//     replaces it (the auth azure module, package auth/azure).
//   - Content filtering: a filtered answer ends with finish_reason
//     content_filter (a refusal in the IR), a filtered prompt is a 400
//     with error.code content_filter, and streams carry chunks with empty
//     choices and only filter results. These are OpenAI's own shapes, or
//     members the OpenAI decoders skip, so the codecs are OpenAI's
//     (translate/cloud_codecs.go).
//
// Model names are deployment names, which the operator chose; a route's
// rename maps a client's names onto them.

// AzureSettings says where an Azure OpenAI backend's API lives.
type AzureSettings struct {
	// The Azure OpenAI resource name: the default upstream is
	// https://{resource}.openai.azure.com. Without it the backend must name
	// its reverse_proxy (an Azure API Management gateway, a private
	// endpoint, a test server).
	Resource string `json:"resource,omitempty"`

	// The api-version of the classic deployment API, such as "2024-10-21"
	// or "2025-04-01-preview": chat goes to
	// /openai/deployments/{deployment}/chat/completions?api-version=…,
	// responses to /openai/responses?api-version=…. Empty: the v1 API,
	// /openai/v1/chat/completions and /openai/v1/responses, which takes
	// no api-version. A backend's base_path replaces /openai/v1 (or
	// /openai) when set.
	APIVersion string `json:"api_version,omitempty"`
}

func init() {
	for _, p := range []translate.Protocol{translate.ProtocolAzureOpenAIChat, translate.ProtocolAzureOpenAIResponses} {
		endpoint := func(string, bool) (string, string) { return "/chat/completions", "" }
		if p == translate.ProtocolAzureOpenAIResponses {
			endpoint = func(string, bool) (string, string) { return "/responses", "" }
		}
		registerProtocol(&protocolRow{
			protocol:         p,
			endpoint:         endpoint,
			setKey:           func(h http.Header, key string) { h.Set("Api-Key", key) },
			configure:        configureAzure,
			defaultUpstream:  azureUpstream,
			modelInURL:       p == translate.ProtocolAzureOpenAIChat, // the classic API's deployment
			tokenFraming:     tokencount.OpenAI,
			provider:         semconv.GenAIProviderNameAzureAIOpenAI,
			recordedPrefixes: []string{"X-Ratelimit-", "Apim-Request-Id", "X-Ms-", "Azureml-Model-"},
		})
	}
}

var (
	azureVersionRE  = regexp.MustCompile(`^20[0-9]{2}-[01][0-9]-[0-3][0-9](-preview)?$`)
	azureResourceRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9-]{0,62}$`)
)

// configureAzure is the Azure rows' configure: it checks the azure
// settings and sets the base path and, for the classic API, the endpoint.
func configureAzure(b *Backend) error {
	if b.ListModels != "" {
		return fmt.Errorf("list_models does not apply to %s backends: Azure lists models, not deployments; list the deployments in the routes", b.Protocol)
	}
	a := b.Azure
	if a == nil {
		a = new(AzureSettings)
	}
	if a.Resource != "" && !azureResourceRE.MatchString(a.Resource) {
		return fmt.Errorf("azure resource %q is not a resource name (letters, digits and hyphens)", a.Resource)
	}
	if b.APIKey == "" && !b.PassClientAuth && len(b.AuthRaw) == 0 {
		return fmt.Errorf("%s needs api_key (sent as api-key) or auth azure (Entra ID)", b.Protocol)
	}
	if a.APIVersion == "" {
		if b.BasePath == "" {
			b.basePath = "/openai/v1"
		}
		return nil
	}
	if !azureVersionRE.MatchString(a.APIVersion) {
		return fmt.Errorf("azure api_version %q is not an Azure OpenAI API version (such as 2024-10-21 or 2025-04-01-preview)", a.APIVersion)
	}
	if b.BasePath == "" {
		b.basePath = "/openai"
	}
	query := "api-version=" + url.QueryEscape(a.APIVersion)
	if b.Protocol == translate.ProtocolAzureOpenAIResponses {
		b.endpoint = func(string, bool) (string, string) { return "/responses", query }
	} else {
		b.endpoint = func(model string, _ bool) (string, string) {
			return "/deployments/" + escapeModelPath(model) + "/chat/completions", query
		}
	}
	return nil
}

// azureUpstream is the Azure rows' defaultUpstream: a stock reverse_proxy
// to the resource's host, over HTTPS.
func azureUpstream(b *Backend) (json.RawMessage, error) {
	if b.Azure == nil || b.Azure.Resource == "" {
		return nil, fmt.Errorf("%s needs azure resource or a reverse_proxy", b.Protocol)
	}
	return defaultHTTPSUpstream(b.Azure.Resource + ".openai.azure.com")
}

// unmarshalAzure parses a backend's azure block; the dispenser is on
// "azure".
//
//	azure {
//		resource    <name>
//		api_version <version>
//	}
func unmarshalAzure(d *caddyfile.Dispenser) (*AzureSettings, error) {
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	a := new(AzureSettings)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var dst *string
		switch d.Val() {
		case "resource":
			dst = &a.Resource
		case "api_version":
			dst = &a.APIVersion
		default:
			return nil, d.Errf("unrecognized azure setting '%s'", d.Val())
		}
		if !d.AllArgs(dst) {
			return nil, d.ArgErr()
		}
	}
	return a, nil
}

// checkAzureSettings refuses azure settings on a backend of a protocol that
// does not read them (Validate), rather than ignoring them.
func checkAzureSettings(b *Backend) error {
	if b.Azure != nil && b.Protocol != translate.ProtocolAzureOpenAIChat && b.Protocol != translate.ProtocolAzureOpenAIResponses {
		return fmt.Errorf("azure settings apply to azure_openai and azure_openai_responses backends only, not %q", b.Protocol)
	}
	return nil
}
