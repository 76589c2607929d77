package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/louter/louter/internal/loadbench/harness"
	"github.com/louter/louter/translate"
)

// target is one row of the benchmark: a Caddy process of its own and the
// request sent to it.
type target struct {
	name  string // short id, used in the results file
	label string // the row's name in the tables
	// baseline is the target this one's CPU and latency are compared
	// with, run in the same repetition ("" for a baseline).
	baseline string
	path     string // the request's URL path
	body     []byte
	proto    harness.Protocol // of the response
	site     string           // the site block's handler directives
	observed bool             // Caddy's tracing and metrics enabled
	reverse  bool             // the reverse check, run with -reverse
	// bin is the Caddy binary the target runs from: "" for the run's
	// own, the -before binary for a "@before" twin (compare.go).
	bin string

	proc        *harness.Process
	port        int
	metricsPort int // an observed target's metrics endpoint
	adminPort   int // a profiled target's admin endpoint (pprof); 0 = admin off
}

// bodies are the requests the targets send.
type bodies struct {
	bigAnthropic, bigOpenAI     []byte // the ~100 KB Claude Code request
	smallAnthropic, smallOpenAI []byte // a ~1 KB one
}

// loadBodies reads the Claude Code fixture and computes the OpenAI Chat
// bodies louter sends upstream for it and for the small request, with
// the translate package, so that Caddy's plain proxy carries the same
// bytes as louter's backend request.
func loadBodies(fixture string) (bodies, error) {
	big, err := os.ReadFile(fixture)
	if err != nil {
		return bodies{}, err
	}
	b := bodies{bigAnthropic: big, smallAnthropic: []byte(smallRequest)}
	if b.bigOpenAI, err = openAIForm(big); err != nil {
		return bodies{}, fmt.Errorf("%s: %w", fixture, err)
	}
	if b.smallOpenAI, err = openAIForm(b.smallAnthropic); err != nil {
		return bodies{}, fmt.Errorf("the small request: %w", err)
	}
	return b, nil
}

// openAIForm is the OpenAI Chat body louter sends an openai_chat backend
// for an Anthropic request: translated as the handler translates it
// (translateRequest in caddymodule/handler.go, with the model kept: Claude
// Code's tool changes applied, its billing line left out), with the
// prompt_cache_key louter adds for the session in metadata.user_id.
func openAIForm(anthropic []byte) ([]byte, error) {
	from, _ := translate.Lookup(translate.ProtocolAnthropic)
	to, _ := translate.Lookup(translate.ProtocolOpenAIChat)
	model := gjson.GetBytes(anthropic, "model").Str
	out, _, err := translate.TranslateRequest(anthropic, nil, &translate.RequestRoute{
		Client: from, Backend: to, Model: model, BackendModel: model,
		Edit: translate.BackendEdit(false, true),
	})
	if err != nil {
		return nil, err
	}
	session := gjson.Get(gjson.GetBytes(anthropic, "metadata.user_id").Str, "session_id").Str
	if session == "" {
		return out, nil
	}
	return sjson.SetBytes(out, "prompt_cache_key", sessionCacheKey(session))
}

// sessionCacheKey is the prompt_cache_key louter gives a request translated
// for an OpenAI backend whose conversation key is Claude Code's session,
// with no client key table (caddymodule/cache_key.go).
func sessionCacheKey(session string) string {
	sum := sha256.Sum256([]byte("\x00session:" + session))
	return "louter-" + hex.EncodeToString(sum[:16])
}

// smallRequest is a ~1 KB Anthropic request: a short system prompt, one
// tool and a question, streamed, with Claude Code's session metadata.
const smallRequest = `{"model":"claude-sonnet-4-5","max_tokens":8192,"stream":true,` +
	`"metadata":{"user_id":"{\"device_id\":\"0000000000000000000000000000000000000000000000000000000000000000\",\"account_uuid\":\"\",\"session_id\":\"00000000-0000-4000-8000-000000000001\"}"},` +
	`"system":[{"type":"text","text":"You are a coding assistant working in a Go repository. Answer briefly and use the tools when you need to run something."}],` +
	`"tools":[{"name":"Bash","description":"Runs a shell command in the repository and returns its output.","input_schema":{"type":"object","properties":{"command":{"type":"string","description":"The command to run"},"description":{"type":"string","description":"What the command does, in a few words"},"timeout":{"type":"number","description":"Timeout in milliseconds"}},"required":["command"],"additionalProperties":false}}],` +
	`"messages":[{"role":"user","content":[{"type":"text","text":"The tests of the translate and stream packages fail since the last change to the OpenAI Chat codec. Run them with the race detector and tell me which test fails first and why. Do not change any file yet; I want to read the failure first."}]}]}`

// louterSite is a louter handler that sends every model to a backend of
// protocol at upstream.
func louterSite(protocol translate.Protocol, upstream string) string {
	return fmt.Sprintf(`louter {
		backend up {
			protocol %s
			reverse_proxy %s
		}
		model * up
	}`, protocol, upstream)
}

// targets are the rows of the table, louter with Caddy's tracing
// and metrics on against off (issue 14) — with Caddy's plain proxy
// observed too, which separates Caddy's own cost of tracing and metrics
// from what louter adds to it — and the reverse direction (an
// OpenAI client, an Anthropic backend) against Caddy proxying the
// Anthropic stream.
func targets(b bodies, upstream string) []*target {
	proxy := "reverse_proxy " + upstream
	louter := louterSite(translate.ProtocolOpenAIChat, upstream)
	return []*target{
		{name: "caddy-big", label: "Caddy `reverse_proxy`, same bytes in OpenAI form", path: "/v1/chat/completions", body: b.bigOpenAI, proto: harness.OpenAIChat, site: proxy},
		{name: "louter-big", label: "louter, Anthropic client → OpenAI Chat backend", baseline: "caddy-big", path: "/v1/messages", body: b.bigAnthropic, proto: harness.Anthropic, site: louter},
		{name: "louter-big-observed", label: "louter, 100 KB request, Caddy `tracing` + `metrics` on", baseline: "louter-big", path: "/v1/messages", body: b.bigAnthropic, proto: harness.Anthropic, site: louter, observed: true},
		{name: "louter-pass", label: "louter, OpenAI client → OpenAI Chat backend (passthrough)", baseline: "caddy-big", path: "/v1/chat/completions", body: b.bigOpenAI, proto: harness.OpenAIChat, site: louter},
		{name: "caddy-small", label: "Caddy `reverse_proxy`, ~1 KB request in OpenAI form", path: "/v1/chat/completions", body: b.smallOpenAI, proto: harness.OpenAIChat, site: proxy},
		{name: "louter-small", label: "louter, Anthropic → OpenAI with a ~1 KB request", baseline: "caddy-small", path: "/v1/messages", body: b.smallAnthropic, proto: harness.Anthropic, site: louter},
		{name: "caddy-small-observed", label: "Caddy `reverse_proxy`, ~1 KB request, `tracing` + `metrics` on", baseline: "caddy-small", path: "/v1/chat/completions", body: b.smallOpenAI, proto: harness.OpenAIChat, site: proxy, observed: true},
		{name: "louter-small-observed", label: "louter, ~1 KB request, Caddy `tracing` + `metrics` on", baseline: "louter-small", path: "/v1/messages", body: b.smallAnthropic, proto: harness.Anthropic, site: louter, observed: true},
		{name: "caddy-anthropic", label: "Caddy `reverse_proxy`, the 100 KB request and stream in Anthropic form", path: "/v1/messages", body: b.bigAnthropic, proto: harness.Anthropic, site: proxy, reverse: true},
		{name: "louter-reverse", label: "louter, OpenAI client → Anthropic backend, 100 KB", baseline: "caddy-anthropic", path: "/v1/chat/completions", body: b.bigOpenAI, proto: harness.OpenAIChat, site: louterSite(translate.ProtocolAnthropic, upstream), reverse: true},
	}
}

// caddyfile is the whole config of a target's process: the site on its port,
// the admin endpoint for a profiled target, and for an observed target Caddy's metrics (served on metricsPort, so
// the run can check louter's counters moved) and tracing.
func (t *target) caddyfile() string {
	var b strings.Builder
	if t.adminPort > 0 {
		fmt.Fprintf(&b, "{\n\tadmin 127.0.0.1:%d\n", t.adminPort)
	} else {
		b.WriteString("{\n\tadmin off\n")
	}
	b.WriteString("\tauto_https off\n\tpersist_config off\n")
	if t.observed {
		b.WriteString("\tmetrics\n")
	}
	b.WriteString("}\n")
	fmt.Fprintf(&b, ":%d {\n\tbind 127.0.0.1\n", t.port)
	if t.observed {
		b.WriteString("\ttracing\n")
	}
	fmt.Fprintf(&b, "\t%s\n}\n", t.site)
	if t.observed {
		fmt.Fprintf(&b, ":%d {\n\tbind 127.0.0.1\n\tmetrics\n}\n", t.metricsPort)
	}
	return b.String()
}

// request is what a load sends this target.
func (t *target) request() harness.Request {
	return harness.Request{URL: fmt.Sprintf("http://127.0.0.1:%d%s", t.port, t.path), Body: t.body, Protocol: t.proto}
}
