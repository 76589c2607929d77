package caddymodule

import (
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

func TestUnmarshalCaddyfile(t *testing.T) {
	d := caddyfile.NewTestDispenser(`
	louter {
		max_request_body 1MiB
		max_count_body 512KiB
		count_concurrency 3
		backend oai {
			protocol openai_chat
			api_key {env.OPENAI_API_KEY}
			base_path /api/v1
			max_tokens 32000
			reverse_proxy localhost:9001 localhost:9002 {
				lb_policy round_robin
				header_up X-Extra yes
			}
		}
		backend anth {
			protocol anthropic
			pass_client_auth
			reverse_proxy https://api.anthropic.com
		}
		model claude-* oai gpt-4o-mini
		model * anth
	}`)
	var l Louter
	if err := l.UnmarshalCaddyfile(d); err != nil {
		t.Fatal(err)
	}
	if l.MaxRequestBody != 1<<20 {
		t.Errorf("max_request_body = %d", l.MaxRequestBody)
	}
	if l.MaxCountBody != 512<<10 || l.CountConcurrency != 3 {
		t.Errorf("max_count_body = %d, count_concurrency = %d", l.MaxCountBody, l.CountConcurrency)
	}
	oai, anth := l.Backends["oai"], l.Backends["anth"]
	if oai == nil || anth == nil || len(l.Backends) != 2 {
		t.Fatalf("backends %v", l.Backends)
	}
	if oai.Protocol != translate.ProtocolOpenAIChat || oai.APIKey != "{env.OPENAI_API_KEY}" || oai.BasePath != "/api/v1" ||
		oai.MaxTokens != 32000 || oai.PassClientAuth {
		t.Errorf("oai = %+v", oai)
	}
	up := gjson.ParseBytes(oai.UpstreamRaw)
	if up.Get("handler").String() != "reverse_proxy" || up.Get("upstreams.#").Int() != 2 ||
		up.Get("upstreams.1.dial").String() != "localhost:9002" ||
		up.Get("load_balancing.selection_policy.policy").String() != "round_robin" ||
		up.Get("headers.request.set.X-Extra.0").String() != "yes" {
		t.Errorf("oai upstream = %s", oai.UpstreamRaw)
	}
	if anth.Protocol != translate.ProtocolAnthropic || !anth.PassClientAuth || anth.APIKey != "" {
		t.Errorf("anth = %+v", anth)
	}
	if up := gjson.ParseBytes(anth.UpstreamRaw); up.Get("transport.tls").Exists() == false || up.Get("upstreams.0.dial").String() != "api.anthropic.com:443" {
		t.Errorf("anth upstream = %s", anth.UpstreamRaw)
	}
	want := []ModelRoute{{Match: "claude-*", Backend: "oai", Rename: "gpt-4o-mini"}, {Match: "*", Backend: "anth"}}
	if !reflect.DeepEqual(l.Models, want) {
		t.Errorf("models = %+v", l.Models)
	}
}

func TestUnmarshalCaddyfileErrors(t *testing.T) {
	const rp = "reverse_proxy localhost:1"
	tests := []struct {
		name, input, want string
	}{
		{"argument on the directive", `louter foo {}`, "wrong argument count"},
		{"unknown subdirective", `louter { bogus }`, "unrecognized louter subdirective 'bogus'"},
		{"unknown backend subdirective", "louter {\nbackend x {\nprotocol anthropic\n" + rp + "\ncolor blue\n}\n}", "unrecognized louter backend subdirective 'color'"},
		{"backend without a name", "louter {\nbackend {\n}\n}", "wrong argument count"},
		{"backend with two names", "louter {\nbackend x y {\n}\n}", "wrong argument count"},
		{"backend twice", "louter {\nbackend x {\nprotocol anthropic\n" + rp + "\n}\nbackend x {\nprotocol anthropic\n" + rp + "\n}\n}", "backend 'x' defined twice"},
		{"backend without protocol", "louter {\nbackend x {\n" + rp + "\n}\n}", "protocol is required"},
		{"backend without reverse_proxy", "louter {\nbackend x {\nprotocol anthropic\n}\n}", "reverse_proxy is required"},
		{"two reverse_proxy", "louter {\nbackend x {\nprotocol anthropic\n" + rp + "\n" + rp + "\n}\n}", "reverse_proxy already specified"},
		{"bad reverse_proxy subdirective", "louter {\nbackend x {\nprotocol anthropic\nreverse_proxy localhost:1 {\nlb_polcy first\n}\n}\n}", "lb_polcy"},
		{"bad upstream address", "louter {\nbackend x {\nprotocol anthropic\nreverse_proxy ftp://x\n}\n}", "unsupported URL scheme"},
		{"handle_response without the adapter", "louter {\nbackend x {\nprotocol anthropic\nreverse_proxy localhost:1 {\nhandle_response {\nrespond 200\n}\n}\n}\n}", "needs the Caddyfile adapter"},
		{"protocol without value", "louter {\nbackend x {\nprotocol\n}\n}", "wrong argument count"},
		{"max_tokens not a number", "louter {\nbackend x {\nmax_tokens lots\n}\n}", "invalid max_tokens"},
		{"max_tokens zero", "louter {\nbackend x {\nmax_tokens 0\n}\n}", "invalid max_tokens"},
		{"pass_client_auth with an argument", "louter {\nbackend x {\npass_client_auth yes\n}\n}", "wrong argument count"},
		{"max_request_body bad", "louter {\nmax_request_body huge\n}", "invalid max_request_body"},
		{"max_request_body twice", "louter {\nmax_request_body 1MB\nmax_request_body 2MB\n}", "already specified"},
		{"max_count_body bad", "louter {\nmax_count_body huge\n}", "invalid max_count_body"},
		{"count_concurrency zero", "louter {\ncount_concurrency 0\n}", "invalid count_concurrency"},
		{"unknown_paths value", "louter {\nunknown_paths drop\n}", "invalid unknown_paths"},
		{"count_concurrency twice", "louter {\ncount_concurrency 2\ncount_concurrency off\n}", "already specified"},
		{"model with one argument", "louter {\nmodel claude-*\n}", "wrong argument count"},
		{"model with four arguments", "louter {\nmodel a b c d\n}", "wrong argument count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Louter
			err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
