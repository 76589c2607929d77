package caddymodule

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// TestConfigureCloudBackends: the vertex and azure settings are checked
// at provision with errors that name the setting, and make the URL the
// cloud serves.
func TestConfigureCloudBackends(t *testing.T) {
	auth := json.RawMessage(`{"method":"google"}`)
	entra := json.RawMessage(`{"method":"azure"}`)
	tests := []struct {
		name      string
		b         Backend
		wantErr   string
		basePath  string
		path, raw string // the endpoint of model "m@1", streaming
	}{
		{"vertex claude", Backend{Protocol: translate.ProtocolVertexAnthropic, AuthRaw: auth, Vertex: &VertexSettings{Project: "my-project", Location: "us-east5"}},
			"", "/v1/projects/my-project/locations/us-east5", "/publishers/anthropic/models/m@1:streamRawPredict", ""},
		{"vertex claude global by default", Backend{Protocol: translate.ProtocolVertexAnthropic, AuthRaw: auth, Vertex: &VertexSettings{Project: "my-project"}},
			"", "/v1/projects/my-project/locations/global", "/publishers/anthropic/models/m@1:streamRawPredict", ""},
		{"vertex gemini v1beta1", Backend{Protocol: translate.ProtocolVertexGemini, AuthRaw: auth, Vertex: &VertexSettings{Project: "my-project", Location: "eu", APIVersion: "v1beta1"}},
			"", "/v1beta1/projects/my-project/locations/eu", "/publishers/google/models/m@1:streamGenerateContent", "alt=sse"},
		{"vertex gemini express", Backend{Protocol: translate.ProtocolVertexGemini, APIKey: "{env.K}"},
			"", "/v1beta1", "/publishers/google/models/m@1:streamGenerateContent", "alt=sse"},
		{"no project", Backend{Protocol: translate.ProtocolVertexAnthropic, AuthRaw: auth, Vertex: &VertexSettings{Location: "us-east5"}}, "vertex project is required", "", "", ""},
		{"no vertex block", Backend{Protocol: translate.ProtocolVertexGemini, AuthRaw: auth}, "vertex project is required", "", "", ""},
		{"bad project", Backend{Protocol: translate.ProtocolVertexAnthropic, AuthRaw: auth, Vertex: &VertexSettings{Project: "My_Project/../x"}}, `vertex project "My_Project/../x" is not a Google Cloud project ID`, "", "", ""},
		{"bad location", Backend{Protocol: translate.ProtocolVertexAnthropic, AuthRaw: auth, Vertex: &VertexSettings{Project: "my-project", Location: "us east5"}}, `vertex location "us east5" is not a location`, "", "", ""},
		{"bad version", Backend{Protocol: translate.ProtocolVertexAnthropic, AuthRaw: auth, Vertex: &VertexSettings{Project: "my-project", APIVersion: "v2"}}, `vertex api_version "v2": want v1 or v1beta1`, "", "", ""},
		{"no auth", Backend{Protocol: translate.ProtocolVertexAnthropic, Vertex: &VertexSettings{Project: "my-project"}}, "vertex_anthropic needs auth google", "", "", ""},
		{"claude with a key", Backend{Protocol: translate.ProtocolVertexAnthropic, APIKey: "k"}, "vertex_anthropic takes no API key: authenticate with auth google", "", "", ""},
		{"express with a project", Backend{Protocol: translate.ProtocolVertexGemini, APIKey: "k", Vertex: &VertexSettings{Project: "my-project"}}, "express mode, which names no project", "", "", ""},
		{"vertex base_path", Backend{Protocol: translate.ProtocolVertexGemini, AuthRaw: auth, BasePath: "/x", Vertex: &VertexSettings{Project: "my-project"}}, "base_path does not apply to vertex_gemini", "", "", ""},
		{"vertex list_models", Backend{Protocol: translate.ProtocolVertexGemini, AuthRaw: auth, ListModels: "passthrough", Vertex: &VertexSettings{Project: "my-project"}}, "list_models does not apply", "", "", ""},

		{"azure v1", Backend{Protocol: translate.ProtocolAzureOpenAIChat, APIKey: "k"}, "", "/openai/v1", "/chat/completions", ""},
		{"azure v1 responses", Backend{Protocol: translate.ProtocolAzureOpenAIResponses, AuthRaw: entra}, "", "/openai/v1", "/responses", ""},
		{"azure classic", Backend{Protocol: translate.ProtocolAzureOpenAIChat, APIKey: "k", Azure: &AzureSettings{APIVersion: "2024-10-21"}},
			"", "/openai", "/deployments/m@1/chat/completions", "api-version=2024-10-21"},
		{"azure classic responses", Backend{Protocol: translate.ProtocolAzureOpenAIResponses, APIKey: "k", Azure: &AzureSettings{APIVersion: "2025-04-01-preview"}},
			"", "/openai", "/responses", "api-version=2025-04-01-preview"},
		{"azure base_path kept", Backend{Protocol: translate.ProtocolAzureOpenAIChat, APIKey: "k", BasePath: "/gw/openai/v1"}, "", "", "/chat/completions", ""},
		{"azure no credential", Backend{Protocol: translate.ProtocolAzureOpenAIChat}, "azure_openai needs api_key (sent as api-key) or auth azure", "", "", ""},
		{"azure bad version", Backend{Protocol: translate.ProtocolAzureOpenAIChat, APIKey: "k", Azure: &AzureSettings{APIVersion: "latest"}}, `azure api_version "latest" is not an Azure OpenAI API version`, "", "", ""},
		{"azure bad resource", Backend{Protocol: translate.ProtocolAzureOpenAIChat, APIKey: "k", Azure: &AzureSettings{Resource: "evil.com/x"}}, `azure resource "evil.com/x" is not a resource name`, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.b
			b.basePath = normalizeBasePath(b.BasePath)
			row := rowOf(b.Protocol)
			err := row.configure(&b)
			if wantError(t, err, tt.wantErr) {
				return
			}
			if tt.basePath != "" && b.basePath != tt.basePath {
				t.Errorf("base path %q, want %q", b.basePath, tt.basePath)
			}
			endpoint := row.endpoint
			if b.endpoint != nil {
				endpoint = b.endpoint
			}
			if path, raw := endpoint("m@1", true); path != tt.path || raw != tt.raw {
				t.Errorf("endpoint %q %q, want %q %q", path, raw, tt.path, tt.raw)
			}
		})
	}
}

// TestCloudSettingsMisplaced: vertex or azure settings on another
// protocol's backend are refused, not ignored.
func TestCloudSettingsMisplaced(t *testing.T) {
	if err := checkVertexSettings(&Backend{Protocol: "anthropic", Vertex: &VertexSettings{}}); err == nil || !strings.Contains(err.Error(), "vertex settings apply to") {
		t.Errorf("vertex on anthropic: %v", err)
	}
	if err := checkAzureSettings(&Backend{Protocol: translate.ProtocolVertexGemini, Azure: &AzureSettings{}}); err == nil || !strings.Contains(err.Error(), "azure settings apply to") {
		t.Errorf("azure on vertex_gemini: %v", err)
	}
	if err := checkAzureSettings(&Backend{Protocol: translate.ProtocolAzureOpenAIChat, Azure: &AzureSettings{}}); err != nil {
		t.Errorf("azure on azure_openai: %v", err)
	}
}

// TestCloudDefaultUpstreams: a backend without reverse_proxy reaches the
// host its location or resource names, over TLS.
func TestCloudDefaultUpstreams(t *testing.T) {
	for _, tt := range []struct {
		b    Backend
		dial string
	}{
		{Backend{Protocol: translate.ProtocolVertexAnthropic, Vertex: &VertexSettings{Project: "p", Location: "us-east5"}}, "us-east5-aiplatform.googleapis.com:443"},
		{Backend{Protocol: translate.ProtocolVertexAnthropic, Vertex: &VertexSettings{Project: "p"}}, "aiplatform.googleapis.com:443"},
		{Backend{Protocol: translate.ProtocolVertexGemini, Vertex: &VertexSettings{Project: "p", Location: "eu"}}, "aiplatform.eu.rep.googleapis.com:443"},
		{Backend{Protocol: translate.ProtocolVertexGemini, APIKey: "k"}, "aiplatform.googleapis.com:443"},
		{Backend{Protocol: translate.ProtocolAzureOpenAIChat, Azure: &AzureSettings{Resource: "my-res"}}, "my-res.openai.azure.com:443"},
	} {
		raw, err := rowOf(tt.b.Protocol).defaultUpstream(&tt.b)
		if err != nil {
			t.Fatal(err)
		}
		j := gjson.ParseBytes(raw)
		if j.Get("handler").Str != "reverse_proxy" || j.Get("upstreams.0.dial").Str != tt.dial || !j.Get("transport.tls").Exists() {
			t.Errorf("%s: %s, want a TLS reverse_proxy to %s", tt.b.Protocol, raw, tt.dial)
		}
	}
	if _, err := azureUpstream(&Backend{Protocol: translate.ProtocolAzureOpenAIChat}); err == nil || !strings.Contains(err.Error(), "needs azure resource or a reverse_proxy") {
		t.Errorf("azure without resource: %v", err)
	}
}

// TestCloudCodecBodies: Vertex's Claude body has no model and Vertex's
// anthropic_version, and keeps stream; the other cloud codecs write their
// hosted protocol's body.
func TestCloudCodecBodies(t *testing.T) {
	anth, _ := translate.Lookup("anthropic")
	req, err := anth.DecodeRequest([]byte(`{"model":"claude-x","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := translate.Lookup(translate.ProtocolVertexAnthropic)
	body, err := vc.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	j := gjson.ParseBytes(body)
	if j.Get("model").Exists() || j.Get("anthropic_version").Str != "vertex-2023-10-16" || !j.Get("stream").Bool() || j.Get("messages.0.content.0.text").Str != "hi" && j.Get("messages.0.content").Str != "hi" {
		t.Errorf("vertex claude body %s", body)
	}
	for _, p := range []translate.Protocol{translate.ProtocolAzureOpenAIChat, translate.ProtocolAzureOpenAIResponses} {
		c, _ := translate.Lookup(p)
		body, err := c.EncodeRequest(req)
		if err != nil || gjson.GetBytes(body, "model").Str != "claude-x" {
			t.Errorf("%s body %s %v, want the model (the deployment)", p, body, err)
		}
	}
}
