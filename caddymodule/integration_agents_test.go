package caddymodule_test

// Today's Anthropic clients through a real Caddy (anthropic_agents.go): API
// versions 2023-06-01 and 2026-10-21 on either side, betas per backend,
// Claude Code's start-up probe, request-id on every answer, the workspace
// header, and Claude Code's billing line toward other backends.

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

const agentsCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		unknown_paths not_found
		backend anth26 {
			protocol anthropic
			api_key anth-backend-key
			anthropic_version 2026-10-21
			drop_betas per-turn-control-* mid-conversation-tool-changes-2026-07-01
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend anth23 {
			protocol anthropic
			pass_client_auth
			anthropic_version 2023-06-01
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend anth {
			protocol anthropic
			api_key anth-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend oai-keep {
			protocol openai_chat
			keep_billing_header
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend resp {
			protocol openai_responses
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model resp-* resp
		model v26-* anth26
		model v23-* anth23
		model claude-* anth
		model gpt-keep oai-keep
		model gpt-* oai
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name agents
		chunk_delay 0
	}
}
:{PORT2} {
	bind 127.0.0.1
	metrics
}
`

type agentsEnv struct {
	louter, mock, metrics string
}

func startAgentsEnv(t *testing.T) *agentsEnv {
	t.Helper()
	ports := testcaddy.Start(t, agentsCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	testcaddy.WaitListening(t, ports[2])
	return &agentsEnv{testcaddy.URL(ports[0]), testcaddy.URL(ports[1]), testcaddy.URL(ports[2])}
}

// exchange posts body with headers (name, value, ...) and returns the
// answer and the one request the mock received (zero when none).
func (e *agentsEnv) exchange(t *testing.T, path, body string, headers ...string) (*http.Response, string, gjson.Result) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, e.mock+"/_mock/requests", nil)
	if resp, err := testcaddy.Client.Do(req); err == nil {
		resp.Body.Close()
	}
	resp := post(t, e.louter+path, body, headers...)
	answer, _ := io.ReadAll(resp.Body)
	jr, err := testcaddy.Client.Get(e.mock + "/_mock/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer jr.Body.Close()
	j, _ := io.ReadAll(jr.Body)
	reqs := gjson.ParseBytes(j).Array()
	if len(reqs) > 1 {
		t.Fatalf("the backend received %d requests, want at most 1", len(reqs))
	}
	var got gjson.Result
	if len(reqs) == 1 {
		got = reqs[0]
	}
	return resp, string(answer), got
}

const sampledBody = `{"model":%q,"max_tokens":64,"temperature":0.2,"top_p":0.9,"top_k":5,"stream":%s,
	"messages":[{"role":"user","content":"hi"}]}`

func sampled(model string, stream bool) string {
	s := "false"
	if stream {
		s = "true"
	}
	return strings.Replace(strings.Replace(sampledBody, "%q", `"`+model+`"`, 1), "%s", s, 1)
}

func TestAgentsAnthropicVersions(t *testing.T) {
	e := startAgentsEnv(t)

	t.Run("2026 client refused sampling whatever the backend", func(t *testing.T) {
		for _, model := range []string{"claude-x", "gpt-x", "v23-x"} {
			resp, answer, got := e.exchange(t, "/v1/messages?beta=true", sampled(model, true),
				"anthropic-version", "2026-10-21", "Authorization", "Bearer sk-ant-api03-client")
			if resp.StatusCode != 400 || gjson.Get(answer, "error.type").String() != "invalid_request_error" ||
				!strings.HasPrefix(gjson.Get(answer, "error.message").String(), "temperature: Extra inputs are not permitted") {
				t.Errorf("%s: %d %s, want Anthropic's 400 naming temperature", model, resp.StatusCode, answer)
			}
			if got.Exists() {
				t.Errorf("%s: the backend was asked", model)
			}
		}
		resp, answer, _ := e.exchange(t, "/v1/messages", `{"model":"gpt-x","max_tokens":9,"messages":[
			{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"}}]}]}`,
			"anthropic-version", "2026-10-21")
		if resp.StatusCode != 400 || !strings.Contains(answer, "messages.1.content.0") {
			t.Errorf("assistant document: %d %s, want a 400 naming messages.1.content.0", resp.StatusCode, answer)
		}
	})

	t.Run("2023 client to a 2026 backend", func(t *testing.T) {
		resp, _, got := e.exchange(t, "/v1/messages?beta=true", sampled("v26-x", false),
			"anthropic-version", "2023-06-01", "x-api-key", "client-key",
			"anthropic-beta", "claude-code-20250219,per-turn-control-2026-07-01, mid-conversation-tool-changes-2026-07-01,context-management-2025-06-27")
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		body := got.Get("body")
		for _, p := range []string{"temperature", "top_p", "top_k"} {
			if body.Get(p).Exists() {
				t.Errorf("the 2026-10-21 backend got %s", p)
			}
		}
		h := got.Get("headers")
		if v := h.Get("Anthropic-Version").String(); v != "2026-10-21" {
			t.Errorf("anthropic-version %q, want the backend's 2026-10-21", v)
		}
		if v := h.Get("Authorization").String(); v != "Bearer anth-backend-key" || h.Get("X-Api-Key").Exists() {
			t.Errorf("credential: Authorization %q, X-Api-Key %q; want the key as a bearer token only", v, h.Get("X-Api-Key").String())
		}
		if v := h.Get("Anthropic-Beta").String(); v != "claude-code-20250219,context-management-2025-06-27" {
			t.Errorf("anthropic-beta %q, want the dropped betas left out", v)
		}
		if got.Get("query").String() != "beta=true" {
			t.Errorf("query %q, want beta=true kept", got.Get("query").String())
		}
	})

	t.Run("2026 client to a 2023 backend", func(t *testing.T) {
		resp, _, got := e.exchange(t, "/v1/messages", `{"model":"v23-x","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`,
			"anthropic-version", "2026-10-21", "Authorization", "Bearer sk-ant-api03-client", "anthropic-workspace-id", "wrkspc_1")
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		h := got.Get("headers")
		if v := h.Get("Anthropic-Version").String(); v != "2023-06-01" {
			t.Errorf("anthropic-version %q, want the backend's 2023-06-01", v)
		}
		if v := h.Get("X-Api-Key").String(); v != "sk-ant-api03-client" || h.Get("Authorization").Exists() {
			t.Errorf("credential: X-Api-Key %q, Authorization %q; want the client's API key in x-api-key", v, h.Get("Authorization").String())
		}
		if v := h.Get("Anthropic-Workspace-Id").String(); v != "wrkspc_1" {
			t.Errorf("anthropic-workspace-id %q, want it passed", v)
		}
		// An OAuth token stays a bearer token.
		_, _, got = e.exchange(t, "/v1/messages", `{"model":"v23-x","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`,
			"anthropic-version", "2026-10-21", "Authorization", "Bearer sk-ant-oat01-token")
		if v := got.Get("headers.Authorization").String(); v != "Bearer sk-ant-oat01-token" {
			t.Errorf("OAuth token: Authorization %q, want it kept", v)
		}
	})

	t.Run("Claude 4.7 and later refuse sampling on any version", func(t *testing.T) {
		for model, want := range map[string]bool{"claude-opus-4-7": false, "claude-sonnet-5": false, "claude-opus-4-6": true, "claude-sonnet-4-20250514": true} {
			_, _, got := e.exchange(t, "/v1/messages", sampled(model, false), "anthropic-version", "2023-06-01")
			if has := got.Get("body.temperature").Exists(); has != want {
				t.Errorf("%s: temperature sent %v, want %v", model, has, want)
			}
		}
		// A translated request too: an OpenAI client asking a 2026 backend.
		_, _, got := e.exchange(t, "/v1/chat/completions", `{"model":"v26-y","temperature":0.3,"top_p":0.5,"messages":[{"role":"user","content":"hi"}]}`)
		if b := got.Get("body"); b.Get("temperature").Exists() || b.Get("top_p").Exists() || got.Get("headers.Anthropic-Version").String() != "2026-10-21" {
			t.Errorf("translated request for the 2026 backend: %s %s", b.Raw, got.Get("headers.Anthropic-Version").String())
		}
	})
}

func TestAgentsClaudeCodeContract(t *testing.T) {
	e := startAgentsEnv(t)

	t.Run("start-up probe", func(t *testing.T) {
		for _, path := range []string{"/api/hello", "/anthropic/api/hello"} {
			req, _ := http.NewRequest(http.MethodHead, e.louter+path, nil)
			req.Header.Set("x-api-key", "whatever")
			start := time.Now()
			resp, err := testcaddy.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || time.Since(start) > 2*time.Second {
				t.Errorf("HEAD %s: %d after %v, want 200 at once", path, resp.StatusCode, time.Since(start))
			}
		}
	})

	t.Run("request-id on every answer", func(t *testing.T) {
		for _, model := range []string{"gpt-x", "claude-x"} {
			for _, stream := range []bool{false, true} {
				resp, answer, _ := e.exchange(t, "/v1/messages?beta=true",
					strings.Replace(sampled(model, stream), `"temperature":0.2,"top_p":0.9,"top_k":5,`, "", 1),
					"anthropic-version", "2023-06-01")
				id := resp.Header.Get("Request-Id")
				if resp.StatusCode != 200 || !strings.HasPrefix(id, "req_") || len(id) < 20 {
					t.Errorf("%s stream=%v: status %d, request-id %q: %.200s", model, stream, resp.StatusCode, id, answer)
				}
			}
		}
	})

	t.Run("billing line", func(t *testing.T) {
		const body = `{"model":%q,"max_tokens":64,"system":[
			{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.330.8fa; cc_entrypoint=sdk-cli;"},
			{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}}],
			"messages":[{"role":"user","content":"hi"}]}`
		for model, keep := range map[string]bool{"gpt-x": false, "gpt-keep": true, "claude-x": true} {
			_, _, got := e.exchange(t, "/v1/messages", strings.Replace(body, "%q", `"`+model+`"`, 1), "anthropic-version", "2023-06-01")
			sent := got.Get("body").Raw
			if has := strings.Contains(sent, "x-anthropic-billing-header"); has != keep {
				t.Errorf("%s: billing line sent %v, want %v: %s", model, has, keep, sent)
			}
			if !strings.Contains(sent, "You are Claude Code.") {
				t.Errorf("%s: the system prompt was lost: %s", model, sent)
			}
		}
	})

	t.Run("prompt_cache_key from the session", func(t *testing.T) {
		const body = `{"model":"gpt-x","max_tokens":9,"messages":[{"role":"user","content":"hi %s"}],
			"metadata":{"user_id":"{\"device_id\":\"d\",\"account_uuid\":\"\",\"session_id\":\"%s\"}"}}`
		keyOf := func(turn, session string) string {
			_, _, got := e.exchange(t, "/v1/messages", strings.Replace(strings.Replace(body, "%s", turn, 1), "%s", session, 1), "anthropic-version", "2023-06-01")
			return got.Get("body.prompt_cache_key").String()
		}
		a1, a2, b := keyOf("one", "sess-a"), keyOf("two", "sess-a"), keyOf("one", "sess-b")
		if !strings.HasPrefix(a1, "louter-") || a1 != a2 || a1 == b || strings.Contains(a1, "sess-a") {
			t.Errorf("keys %q %q %q: want one louter- key per session, the same for each turn, not the session id", a1, a2, b)
		}
		// opencode's X-Session-Id.
		_, _, got := e.exchange(t, "/v1/chat/completions", `{"model":"claude-x","messages":[{"role":"user","content":"hi"}]}`, "X-Session-Id", "ses_1")
		if got.Get("body.prompt_cache_key").Exists() {
			t.Errorf("an Anthropic backend got a prompt_cache_key: %s", got.Get("body").Raw)
		}
		_, _, o1 := e.exchange(t, "/v1/chat/completions", `{"model":"resp-x","messages":[{"role":"user","content":"a"}]}`, "X-Session-Id", "ses_1")
		_, _, o2 := e.exchange(t, "/v1/chat/completions", `{"model":"resp-x","messages":[{"role":"user","content":"b"}]}`, "x-session-affinity", "ses_1")
		if k := o1.Get("body.prompt_cache_key").String(); k == "" || k != o2.Get("body.prompt_cache_key").String() {
			t.Errorf("opencode's X-Session-Id and x-session-affinity: keys %q, %q, want one", k, o2.Get("body.prompt_cache_key").String())
		}
		// Claude Code's session header, without metadata.
		_, _, c1 := e.exchange(t, "/v1/messages", `{"model":"gpt-x","max_tokens":9,"messages":[{"role":"user","content":"a"}]}`, "anthropic-version", "2023-06-01", "X-Claude-Code-Session-Id", "s-1")
		_, _, c2 := e.exchange(t, "/v1/messages", `{"model":"gpt-x","max_tokens":9,"messages":[{"role":"user","content":"b"}]}`, "anthropic-version", "2023-06-01", "X-Claude-Code-Session-Id", "s-1")
		if k := c1.Get("body.prompt_cache_key").String(); k == "" || k != c2.Get("body.prompt_cache_key").String() {
			t.Errorf("X-Claude-Code-Session-Id: keys %q, %q, want one", k, c2.Get("body.prompt_cache_key").String())
		}
	})

	t.Run("dropped betas and lines are counted", func(t *testing.T) {
		// Each pair of requests differs only in what louter leaves out;
		// the drop counts are compared, not their field labels, which the
		// process-wide label bound may have folded into "other" after
		// other tests (metrics.go: maxDroppedLabels).
		const plain = `{"model":%q,"max_tokens":9,"system":"You are Claude Code.","messages":[{"role":"user","content":"hi"}]}`
		const billed = `{"model":%q,"max_tokens":9,"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.330.8fa; cc_entrypoint=sdk-cli;"},{"type":"text","text":"You are Claude Code."}],"messages":[{"role":"user","content":"hi"}]}`
		with := func(body, model string) string { return strings.Replace(body, "%q", `"`+model+`"`, 1) }
		if d0, d1 := e.dropDelta(t, "anth26", with(plain, "v26-x"), "anthropic-beta", "claude-code-20250219"),
			e.dropDelta(t, "anth26", with(plain, "v26-x"), "anthropic-beta", "claude-code-20250219,per-turn-control-2026-07-01"); d1 != d0+1 {
			t.Errorf("drops counted for anth26: %v without a dropped beta, %v with one; want one more", d0, d1)
		}
		if d0, d1 := e.dropDelta(t, "oai", with(plain, "gpt-x")), e.dropDelta(t, "oai", with(billed, "gpt-x")); d1 != d0+1 {
			t.Errorf("drops counted for oai: %v without the billing line, %v with it; want one more", d0, d1)
		}
		if n := testcaddy.Sum(testcaddy.Scrape(t, e.metrics+"/metrics"), "louter_prefix_cache_hit_ratio_count", `backend="oai"`); n < 1 {
			t.Errorf("louter_prefix_cache_hit_ratio observed %v times for oai, want at least 1", n)
		}
	})
}

// dropDelta sends an Anthropic request for a backend and returns how many
// dropped fields louter_dropped_fields_total counted for it. The metrics
// are published once the exchange has ended, which may be just after the
// client read the answer: it waits for the request count to move.
func (e *agentsEnv) dropDelta(t *testing.T, backend, body string, headers ...string) float64 {
	t.Helper()
	label := `backend="` + backend + `"`
	m := testcaddy.Scrape(t, e.metrics+"/metrics")
	reqs, drops := testcaddy.Sum(m, "louter_requests_total", label), testcaddy.Sum(m, "louter_dropped_fields_total", label)
	e.exchange(t, "/v1/messages", body, append([]string{"anthropic-version", "2023-06-01"}, headers...)...)
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		m = testcaddy.Scrape(t, e.metrics+"/metrics")
		if testcaddy.Sum(m, "louter_requests_total", label) > reqs {
			break
		}
	}
	return testcaddy.Sum(m, "louter_dropped_fields_total", label) - drops
}

func TestAgentsCodexCatalog(t *testing.T) {
	e := startAgentsEnv(t)
	resp, err := testcaddy.Client.Get(e.louter + "/v1/models?client_version=0.169.0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	list := gjson.GetBytes(body, "models")
	if resp.StatusCode != 200 || !list.IsArray() || len(list.Array()) == 0 {
		t.Fatalf("%d %s, want Codex's {\"models\":[...]}", resp.StatusCode, body)
	}
	found := false
	for _, m := range list.Array() {
		if m.Get("slug").String() == "gpt-keep" {
			found = true
			for _, f := range []string{"display_name", "supported_reasoning_levels.0.effort", "shell_type", "visibility", "truncation_policy.mode", "supports_parallel_tool_calls"} {
				if !m.Get(f).Exists() {
					t.Errorf("gpt-keep has no %s: %s", f, m.Raw)
				}
			}
		}
	}
	if !found {
		t.Errorf("the routed model gpt-keep is not in the catalog: %s", body)
	}
	// Without client_version: OpenAI's list, as before.
	r2, err := testcaddy.Client.Get(e.louter + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Body.Close()
	b2, _ := io.ReadAll(r2.Body)
	if gjson.GetBytes(b2, "object").String() != "list" {
		t.Errorf("/v1/models: %s, want OpenAI's list", b2)
	}
}
