package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/translate"
)

// TestBodies checks the requests the targets send: Caddy's OpenAI forms
// are the translated Anthropic requests, streamed, with the tools.
func TestBodies(t *testing.T) {
	b, err := loadBodies("../../testdata/bench/claude_code_100k.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name               string
		anthropic, openai  []byte
		minSize, wantTools int
	}{
		{"big", b.bigAnthropic, b.bigOpenAI, 90_000, 12},
		{"small", b.smallAnthropic, b.smallOpenAI, 800, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.anthropic) < tt.minSize || len(tt.anthropic) > 125*tt.minSize/100+2000 {
				t.Errorf("Anthropic body of %d bytes, want about %d", len(tt.anthropic), tt.minSize)
			}
			if !gjson.ValidBytes(tt.openai) {
				t.Fatal("the OpenAI form is not JSON")
			}
			o := gjson.ParseBytes(tt.openai)
			if !o.Get("stream").Bool() || o.Get("model").String() != gjson.GetBytes(tt.anthropic, "model").String() {
				t.Errorf("OpenAI form: stream %v, model %q", o.Get("stream"), o.Get("model"))
			}
			if n := len(o.Get("tools").Array()); n != tt.wantTools {
				t.Errorf("OpenAI form has %d tools, want %d", n, tt.wantTools)
			}
			if o.Get("messages.#").Int() < 2 {
				t.Errorf("OpenAI form has %d messages", o.Get("messages.#").Int())
			}
		})
	}
}

// TestBodiesAreLoutersBackendRequests sends the Anthropic bodies through
// louter to the mock and checks that the OpenAI forms the Caddy baselines
// carry are, byte for byte, what louter sent the backend: the tool changes
// applied (ToolSearch's tool_reference loads the deferred MCP tool; the
// placeholder nobody loads is left out) and the prompt_cache_key of the
// session in metadata.user_id.
func TestBodiesAreLoutersBackendRequests(t *testing.T) {
	b, err := loadBodies("../../testdata/bench/claude_code_100k.json")
	if err != nil {
		t.Fatal(err)
	}
	ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	`+louterSite(translate.ProtocolOpenAIChat, "127.0.0.1:{PORT1}")+`
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock
}
`)
	for _, tt := range []struct {
		name              string
		anthropic, openai []byte
	}{
		{"big", b.bigAnthropic, b.bigOpenAI},
		{"small", b.smallAnthropic, b.smallOpenAI},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodDelete, testcaddy.URL(ports[1])+"/_mock/requests", nil)
			if resp, err := testcaddy.Client.Do(req); err == nil {
				resp.Body.Close()
			}
			resp, err := testcaddy.Client.Post(testcaddy.URL(ports[0])+"/v1/messages", "application/json", bytes.NewReader(tt.anthropic))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("louter answered %d", resp.StatusCode)
			}
			resp, err = testcaddy.Client.Get(testcaddy.URL(ports[1]) + "/_mock/requests")
			if err != nil {
				t.Fatal(err)
			}
			journal, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			sent := gjson.GetBytes(journal, "0.body").Raw
			if sent != string(tt.openai) {
				t.Errorf("louter sent the backend %d bytes, the baseline carries %d; they differ:\nlouter:   %.300s\nbaseline: %.300s", len(sent), len(tt.openai), sent, tt.openai)
			}
			o := gjson.ParseBytes(tt.openai)
			if !strings.HasPrefix(o.Get("prompt_cache_key").Str, "louter-") {
				t.Errorf("no prompt_cache_key: %q", o.Get("prompt_cache_key").Str)
			}
			if tt.name == "big" && (!o.Get(`tools.#(function.name=="mcp__tickets__lookup_ticket")`).Exists() || o.Get(`tools.#(function.name=="DeferredToolPlaceholder")`).Exists()) {
				t.Errorf("tools = %s, want the MCP tool ToolSearch loaded and not the placeholder", o.Get("tools.#.function.name").Raw)
			}
		})
	}
}

func TestCaddyfile(t *testing.T) {
	ts := targets(bodies{}, "127.0.0.1:9")
	for _, tt := range []struct {
		name       string
		admin      int
		want, none []string
	}{
		{"caddy-big", 0, []string{"admin off", ":1000 {", "reverse_proxy 127.0.0.1:9"}, []string{"louter", "tracing", "metrics"}},
		{"louter-big", 0, []string{"protocol openai_chat", "reverse_proxy 127.0.0.1:9", "model * up"}, []string{"tracing", "metrics", "admin 127"}},
		{"louter-big", 1002, []string{"{\n\tadmin 127.0.0.1:1002\n\tauto_https off"}, []string{"admin off"}},
		{"louter-small-observed", 0, []string{"\tmetrics\n}", "\ttracing\n", ":1001 {\n\tbind 127.0.0.1\n\tmetrics\n}"}, nil},
		{"caddy-small-observed", 0, []string{"\ttracing\n", "reverse_proxy 127.0.0.1:9"}, []string{"louter"}},
		{"louter-reverse", 0, []string{"protocol anthropic", "reverse_proxy 127.0.0.1:9"}, []string{"openai_chat"}},
	} {
		tg := find(ts, tt.name)
		tg.port, tg.metricsPort, tg.adminPort = 1000, 1001, tt.admin
		cf := tg.caddyfile()
		for _, w := range tt.want {
			if !strings.Contains(cf, w) {
				t.Errorf("%s: Caddyfile lacks %q:\n%s", tt.name, w, cf)
			}
		}
		for _, w := range tt.none {
			if strings.Contains(cf, w) {
				t.Errorf("%s: Caddyfile has %q:\n%s", tt.name, w, cf)
			}
		}
	}
}

func TestSelectTargets(t *testing.T) {
	all := targets(bodies{}, "u")
	names := func(ts []*target) string {
		var n []string
		for _, t := range ts {
			n = append(n, t.name)
		}
		return strings.Join(n, " ")
	}
	tests := []struct{ only, want string }{
		{"", "caddy-big louter-big louter-big-observed louter-pass caddy-small louter-small caddy-small-observed louter-small-observed caddy-anthropic louter-reverse"},
		{"reverse", "caddy-anthropic louter-reverse"},
		{"pass", "caddy-big louter-pass"},
		{"observed", "caddy-big louter-big louter-big-observed caddy-small louter-small caddy-small-observed louter-small-observed"},
		{"small-observed", "caddy-small louter-small caddy-small-observed louter-small-observed"},
		{"big,small", "caddy-big louter-big louter-big-observed caddy-small louter-small caddy-small-observed louter-small-observed"},
		{"nothing", ""},
	}
	for _, tt := range tests {
		if got := names(selectTargets(all, tt.only)); got != tt.want {
			t.Errorf("-only %q: %q, want %q", tt.only, got, tt.want)
		}
	}
}

func TestProfiled(t *testing.T) {
	r := &runner{cfg: config{profile: "louter-big,,caddy-small"}}
	for name, want := range map[string]bool{"louter-big": true, "caddy-small": true, "louter": false, "louter-big-x": false, "": false} {
		if got := r.profiled(&target{name: name}); got != want {
			t.Errorf("profiled(%q) = %v, want %v", name, got, want)
		}
	}
}
