package caddymodule

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/louter/louter/caddymodule/internal/redact"
	"github.com/louter/louter/translate"
)

// clientHeadersForAllowlist is what a client of any protocol may send: one
// of each kind of header the allowlist decides about.
var clientHeadersForAllowlist = http.Header{
	// credentials of every provider and of Azure
	"Authorization": {"Bearer k"}, "Proxy-Authorization": {"Basic k"}, "Cookie": {"s=k"},
	"X-Api-Key": {"k"}, "Api-Key": {"k"}, "Anthropic-Api-Key": {"k"}, "X-Goog-Api-Key": {"k"},
	"Ocp-Apim-Subscription-Key": {"k"}, "Openai-Organization": {"org"}, "Openai-Project": {"proj"},
	"Chatgpt-Account-Id": {"acct"}, "X-Goog-User-Project": {"p"},
	// protocol headers
	"Anthropic-Version": {"2023-06-01"}, "Anthropic-Beta": {"b"}, "Openai-Beta": {"b"},
	"X-Stainless-Lang": {"go"}, "X-Goog-Api-Client": {"genai"}, "Originator": {"codex"},
	// forwarded to every backend
	"Accept": {"*/*"}, "Content-Type": {"application/json"}, "User-Agent": {"agent"},
	"Traceparent": {"00-1-2-01"}, "Tracestate": {"a=b"}, "X-Request-Id": {"r1"},
	"X-Forwarded-For": {"10.0.0.1"}, "Connection": {"keep-alive"},
	// unknown: dropped unless forward_headers lists it
	"X-Custom": {"c"}, "X-Portkey-Api-Key": {"k"}, "Forwarded": {"for=x"}, "Via": {"1.1 x"},
}

func TestFilterHeaders(t *testing.T) {
	common := []string{"Accept", "Connection", "Content-Type", "Traceparent", "Tracestate", "User-Agent", "X-Forwarded-For", "X-Request-Id"}
	tests := []struct {
		name        string
		protocol    translate.Protocol
		passthrough bool
		extra       map[string]bool
		want        []string // besides common
	}{
		{"translated to anthropic", translate.ProtocolAnthropic, false, nil, nil},
		{"translated to openai_chat", translate.ProtocolOpenAIChat, false, nil, nil},
		{"translated to gemini", translate.ProtocolGemini, false, nil, nil},
		{"anthropic passthrough", translate.ProtocolAnthropic, true, nil, []string{"Anthropic-Beta", "Anthropic-Version", "X-Stainless-Lang"}},
		{"openai_chat passthrough", translate.ProtocolOpenAIChat, true, nil, []string{"Openai-Beta", "X-Stainless-Lang"}},
		{"openai_responses passthrough", translate.ProtocolOpenAIResponses, true, nil, []string{"Openai-Beta", "Originator", "X-Stainless-Lang"}},
		{"gemini passthrough", translate.ProtocolGemini, true, nil, []string{"X-Goog-Api-Client"}},
		{"forward_headers", translate.ProtocolOpenAIChat, false, headerSet("x-custom"), []string{"X-Custom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := clientHeadersForAllowlist.Clone()
			filterHeaders(h, tt.protocol, tt.passthrough, tt.extra)
			var got []string
			for k := range h {
				got = append(got, k)
			}
			want := append(slices.Clone(common), tt.want...)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("kept %v\nwant %v", got, want)
			}
			for k := range h {
				if redact.IsCredentialHeader(k) {
					t.Errorf("credential header %s kept", k)
				}
			}
		})
	}
}

func TestTakeClientCredentials(t *testing.T) {
	tests := []struct {
		protocol translate.Protocol
		query    string
		want     []string // the credential headers forwarded
	}{
		{translate.ProtocolAnthropic, "", []string{"Authorization", "X-Api-Key"}},
		{translate.ProtocolOpenAIChat, "", []string{"Api-Key", "Authorization", "Openai-Organization", "Openai-Project"}},
		{translate.ProtocolOpenAIResponses, "", []string{"Api-Key", "Authorization", "Chatgpt-Account-Id", "Openai-Organization", "Openai-Project"}},
		{translate.ProtocolGemini, "", []string{"Authorization", "X-Goog-Api-Key", "X-Goog-User-Project"}},
	}
	for _, tt := range tests {
		h := clientHeadersForAllowlist.Clone()
		cred := takeClientCredentials(h, tt.protocol, tt.query)
		var got []string
		for k := range cred {
			got = append(got, k)
		}
		slices.Sort(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: forwarded %v, want %v", tt.protocol, got, tt.want)
		}
		for k := range h {
			if redact.IsCredentialHeader(k) {
				t.Errorf("%s: %s left on the request", tt.protocol, k)
			}
		}
	}
	// Only a query key: it moves into the protocol's header.
	cred := takeClientCredentials(http.Header{"Cookie": {"x"}}, translate.ProtocolGemini, "qk")
	if len(cred) != 1 || cred.Get("X-Goog-Api-Key") != "qk" {
		t.Errorf("query key: %v", cred)
	}
}

func TestClientKey(t *testing.T) {
	tests := []struct {
		header http.Header
		query  string
		want   string
	}{
		{http.Header{"X-Api-Key": {"a"}, "Authorization": {"Bearer b"}}, "key=q", "a"},
		{http.Header{"Authorization": {"bearer  b "}}, "", "b"},
		{http.Header{"Authorization": {"Basic dXNlcg=="}, "Api-Key": {"az"}}, "", "az"},
		{http.Header{"X-Goog-Api-Key": {"g"}}, "", "g"},
		{http.Header{}, "alt=sse&KEY=q%2B1", "q+1"},
		{http.Header{}, "alt=sse", ""},
	}
	for _, tt := range tests {
		if got := redact.ClientKey(tt.header, tt.query); got != tt.want {
			t.Errorf("clientKey(%v, %q) = %q, want %q", tt.header, tt.query, got, tt.want)
		}
	}
}

func TestClientSecrets(t *testing.T) {
	got := redact.ClientSecrets(http.Header{"Authorization": {"Bearer tok"}, "Api-Key": {"az"}, "X-Custom": {"no"}}, "a=1&Key=q%2B1")
	slices.Sort(got)
	if want := []string{"az", "q%2B1", "q+1", "tok"}; !slices.Equal(got, want) {
		t.Errorf("redact.ClientSecrets = %v, want %v", got, want)
	}
}

func TestRemoveCredentialParams(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"", ""},
		{"key=a", ""},
		{"beta=true&key=a", "beta=true"},
		{"key=a&beta=true&KEY=b&Key=c", "beta=true"},
		{"k%65y=a&x=%20y", "x=%20y"}, // an escaped name is still "key"
		{"api_key=a&api-key=b&apikey=c&access_token=d&alt=sse", "alt=sse"},
		{"keys=a&monkey=b", "keys=a&monkey=b"},
		{"b=2&a=1", "b=2&a=1"}, // order kept
	}
	for _, tt := range tests {
		if got := removeCredentialParams(tt.raw); got != tt.want {
			t.Errorf("removeCredentialParams(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func TestForwardHeadersRefusesCredentials(t *testing.T) {
	for _, name := range []string{"authorization", "X-API-KEY", "api-key", "cookie", "OpenAI-Project"} {
		l := &Louter{ForwardHeaders: []string{name}}
		if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "credential header") {
			t.Errorf("forward_headers %s: %v", name, err)
		}
		b := &Louter{Backends: map[string]*Backend{"b": {ForwardHeaders: []string{name}}}}
		if err := b.Validate(); err == nil || !strings.Contains(err.Error(), "credential header") {
			t.Errorf("backend forward_headers %s: %v", name, err)
		}
	}
}

func TestUnmarshalForwardHeaders(t *testing.T) {
	var l Louter
	err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser(`louter {
		forward_headers X-A
		forward_headers X-B X-C
		backend b {
			protocol anthropic
			forward_headers X-D
			reverse_proxy localhost:1
		}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.ForwardHeaders, []string{"X-A", "X-B", "X-C"}) || !slices.Equal(l.Backends["b"].ForwardHeaders, []string{"X-D"}) {
		t.Errorf("forward_headers %v, backend %v", l.ForwardHeaders, l.Backends["b"].ForwardHeaders)
	}
	for _, in := range []string{"louter {\nforward_headers\n}", "louter {\nbackend b {\nforward_headers\n}\n}"} {
		if err := new(Louter).UnmarshalCaddyfile(caddyfile.NewTestDispenser(in)); err == nil || !strings.Contains(err.Error(), "wrong argument count") {
			t.Errorf("%q: %v", in, err)
		}
	}
}
