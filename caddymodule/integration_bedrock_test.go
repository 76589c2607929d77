package caddymodule_test

// Integration tests of the AWS Bedrock backend (protocol bedrock: Claude
// through InvokeModel) through a real Caddy: every client protocol's
// official SDK → louter → reverse_proxy → louter_mock's Bedrock runtime,
// which recomputes every request's SigV4 signature with the SDK's signer
// (or checks the Bedrock API key) and streams real AWS event-stream frames
// written with the SDK's encoder.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"

	"github.com/louter/louter/internal/testcaddy"
)

// The secrets the tests configure; none may appear in a log line or a
// recording.
const (
	bedrockTestAKID    = "AKIDLOUTERTEST01"
	bedrockTestSecret  = "bedrock-test-secret-4f1c9a"
	bedrockTestSession = "bedrock-test-session-token-77ab"
	bedrockTestAPIKey  = "bedrock-api-key-c0ffee42"
	bedrockTestARN     = "arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/abc123"
)

// backupBackend is the Anthropic backend the Bedrock tests fall back to,
// louter_mock at addr (backupMock).
func backupBackend(addr string) string {
	return `
		backend backup {
			protocol anthropic
			api_key backup-key
			reverse_proxy 127.0.0.1:` + addr + `
		}`
}

// backupMock is the site of the backup backend's mock, which answers
// every request with text naming itself (backup-mock).
func backupMock(addr string) string {
	return mockSite(addr, "backup-mock", "default_scenario text")
}

// bedrockBackend is a Bedrock backend (protocol) of the Bedrock tests,
// with the given credential directives.
func bedrockBackend(name, protocol, upstream, credentials string) string {
	return `
		backend ` + name + ` {
			protocol ` + protocol + `
			forward_headers X-Mock-Scenario
			` + credentials + `
			reverse_proxy ` + upstream + `
		}`
}

// setBedrockEnv sets the environment the Bedrock tests' Caddyfiles read
// the secrets from.
func setBedrockEnv(t *testing.T) {
	t.Setenv("LOUTER_TEST_AWS_AKID", bedrockTestAKID)
	t.Setenv("LOUTER_TEST_AWS_SECRET", bedrockTestSecret)
	t.Setenv("LOUTER_TEST_AWS_TOKEN", bedrockTestSession)
	t.Setenv("LOUTER_TEST_BEDROCK_KEY", bedrockTestAPIKey)
}

var bedrockCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		record "{RECORD}"` +
	bedrockBackend("bedrock", "bedrock", "127.0.0.1:{PORT1}", sigv4Auth("us-west-2", "{env.LOUTER_TEST_AWS_SECRET}")) +
	bedrockBackend("bedrock-key", "bedrock", "127.0.0.1:{PORT1}", "api_key {env.LOUTER_TEST_BEDROCK_KEY}") +
	bedrockBackend("bedrock-betas", "bedrock", "127.0.0.1:{PORT1}", "api_key {env.LOUTER_TEST_BEDROCK_KEY}\n\t\t\tdrop_betas !mid-conversation-* interleaved-thinking-*") +
	bedrockBackend("bedrock-wrong-secret", "bedrock", "127.0.0.1:{PORT1}", sigv4Auth("us-west-2", "not-the-secret")) +
	bedrockBackend("bedrock-wrong-region", "bedrock", "127.0.0.1:{PORT1}", sigv4Auth("eu-west-1", "{env.LOUTER_TEST_AWS_SECRET}")) +
	backupBackend("{PORT2}") + `
		model claude-bedrock* bedrock us.anthropic.claude-sonnet-4-5-20250929-v1:0
		model claude-arn* bedrock "` + bedrockTestARN + `"
		model claude-key* bedrock-key anthropic.claude-haiku-4-5-20251001-v1:0
		model claude-betas* bedrock-betas anthropic.claude-haiku-4-5-20251001-v1:0
		model claude-wrong-secret* bedrock-wrong-secret anthropic.claude-x-v1:0
		model claude-wrong-region* bedrock-wrong-region anthropic.claude-x-v1:0
		model claude-fallback* bedrock anthropic.claude-x-v1:0 {
			fallback backup claude-backup
		}
	}
}
` + mockSite(":{PORT1}", "bedrock-mock",
	"bedrock_sigv4 "+bedrockTestAKID+" "+bedrockTestSecret+" "+bedrockTestSession+" region us-west-2",
	"bedrock_api_key "+bedrockTestAPIKey) +
	backupMock(":{PORT2}")

// bedrockEnv is the running Caddy, with the files its log and recordings
// went to.
type bedrockEnv struct {
	*env
	caddyOutput
}

func startBedrockEnv(t *testing.T) *bedrockEnv {
	t.Helper()
	setBedrockEnv(t)
	out := newCaddyOutput(t)
	return &bedrockEnv{
		env:         startMockEnv(t, out.options(), strings.ReplaceAll(bedrockCaddyfile, "{RECORD}", out.recordDir), 2),
		caddyOutput: out,
	}
}

// bedrockClientCalls are the four client protocols' SDKs asking for the
// weather with a tool.
var bedrockClientCalls = []struct {
	name string
	call func(e *env, model, scenario string, stream bool) (result, error)
}{
	{"anthropic", func(e *env, m, s string, st bool) (result, error) { return callAnthropic(e, m, s, st) }},
	{"openai_chat", func(e *env, m, s string, st bool) (result, error) { return callOpenAI(e, m, s, st) }},
	{"openai_responses", func(e *env, m, s string, st bool) (result, error) {
		out, err := callResponses(e, s, st, responses.ResponseNewParams{
			Model: m, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the weather in Paris?")}, Tools: respWeatherTools(),
		})
		return out.result, err
	}},
	{"gemini", func(e *env, m, s string, st bool) (result, error) { return callGeminiResult(e, m, s, st) }},
}

// TestIntegrationBedrock drives the Bedrock backend with each client
// protocol's SDK, streaming and not, through a tool call.
func TestIntegrationBedrock(t *testing.T) {
	e := startBedrockEnv(t)
	for _, c := range bedrockClientCalls {
		for _, st := range []bool{false, true} {
			name := c.name + map[bool]string{false: "/json", true: "/stream"}[st]
			t.Run(name, func(t *testing.T) {
				e.clearJournals()
				r, err := c.call(e.env, "claude-bedrock-1", "tool", st)
				if err != nil {
					t.Fatal(err)
				}
				if len(r.toolNames) != 1 || r.toolNames[0] != "get_weather" || gjson.Get(r.toolArgs[0], "city").Str == "" || r.stop != "tool_use" || r.in == 0 || r.out == 0 {
					t.Errorf("result %+v", r)
				}
				got := e.onlyBackendRequest()
				op := map[bool]string{false: "invoke", true: "invoke-with-response-stream"}[st]
				if p := got.Get("path").Str; p != "/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/"+op {
					t.Errorf("path %s", p)
				}
				body := got.Get("body")
				if body.Get("model").Exists() || body.Get("stream").Exists() || body.Get("anthropic_version").Str != "bedrock-2023-05-31" ||
					body.Get("tools.0.name").Str != "get_weather" {
					t.Errorf("body %s", body.Raw)
				}
			})
		}
	}
}

// callGeminiResult asks with the genai SDK and reads the answer as a result.
func callGeminiResult(e *env, model, scenario string, stream bool) (result, error) {
	client := geminiClient(e.t, e, scenario)
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
		Name: "get_weather", Description: "Get the weather for a city",
		ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}},
	}}}}}
	contents := genai.Text("What is the weather in Paris?")
	var r result
	add := func(resp *genai.GenerateContentResponse) {
		for _, c := range resp.Candidates {
			if c.Content != nil {
				for _, p := range c.Content.Parts {
					r.text += p.Text
					if p.FunctionCall != nil {
						r.toolNames = append(r.toolNames, p.FunctionCall.Name)
						args, _ := json.Marshal(p.FunctionCall.Args)
						r.toolArgs = append(r.toolArgs, string(args))
						r.stop = "tool_use"
					}
				}
			}
		}
		if u := resp.UsageMetadata; u != nil {
			r.in, r.out = int64(u.PromptTokenCount), int64(u.CandidatesTokenCount)
		}
	}
	ctx := context.Background()
	if stream {
		for resp, err := range client.Models.GenerateContentStream(ctx, model, contents, cfg) {
			if err != nil {
				return r, err
			}
			add(resp)
		}
		return r, nil
	}
	resp, err := client.Models.GenerateContent(ctx, model, contents, cfg)
	if err != nil {
		return r, err
	}
	add(resp)
	return r, nil
}

// TestIntegrationBedrockAuth: an ARN model id reaches the mock as one
// escaped path segment, signed; an API key goes as a bearer; a wrong
// secret or region fails the signature check and the client gets the
// refusal in its protocol.
func TestIntegrationBedrockAuth(t *testing.T) {
	e := startBedrockEnv(t)
	e.clearJournals()
	r, err := callAnthropic(e.env, "claude-arn-1", "text", true)
	if err != nil || r.text == "" {
		t.Fatalf("ARN: %v %+v", err, r)
	}
	if p := e.onlyBackendRequest().Get("path").Str; p != "/model/"+bedrockTestARN+"/invoke-with-response-stream" {
		t.Errorf("ARN path %s", p)
	}
	e.clearJournals()
	if r, err := callOpenAI(e.env, "claude-key-1", "text", false); err != nil || r.text == "" {
		t.Fatalf("API key: %v %+v", err, r)
	}
	for _, model := range []string{"claude-wrong-secret-1", "claude-wrong-region-1"} {
		_, err := callAnthropic(e.env, model, "text", false)
		status, typ := apiErrorOf(t, err)
		if status != http.StatusForbidden || typ != "permission_error" || !strings.Contains(err.Error(), "signature") && !strings.Contains(err.Error(), "credential scope") {
			t.Errorf("%s: %d %s", model, status, err)
		}
	}
	// count_tokens is asked of Bedrock's CountTokens, signed.
	resp := post(t, e.louter+"/v1/messages/count_tokens", `{"model":"claude-bedrock-1","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},{"role":"user","content":"bye"}]}`)
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || gjson.GetBytes(raw, "input_tokens").Int() != 900003 {
		t.Errorf("count_tokens: %d %s", resp.StatusCode, raw)
	}
	assertNoBedrockSecrets(t, e)
}

// TestIntegrationBedrockStreamException: an exception frame mid-stream
// becomes the client's own error event; a throttled Bedrock falls back.
func TestIntegrationBedrockStreamException(t *testing.T) {
	e := startBedrockEnv(t)
	resp := post(t, e.louter+"/v1/messages", `{"model":"claude-bedrock-1","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "X-Mock-Scenario", "stream_error")
	raw, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(raw), "event: error") || !strings.Contains(string(raw), "overloaded_error") || !strings.Contains(string(raw), "text_delta") {
		t.Errorf("anthropic client stream after a serviceUnavailableException:\n%s", raw)
	}
	resp = post(t, e.louter+"/v1/chat/completions", `{"model":"claude-bedrock-1","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "X-Mock-Scenario", "stream_error")
	raw, _ = io.ReadAll(resp.Body)
	if !strings.Contains(string(raw), `data: {"error"`) {
		t.Errorf("openai client stream after an exception:\n%s", raw)
	}
	for _, st := range []bool{false, true} {
		e.clearJournals()
		r, err := callAnthropic(e.env, "claude-fallback-1", "error_429", st)
		if err != nil || !strings.Contains(r.text, "backup-mock") {
			t.Errorf("fallback (stream %v): %v %+v", st, err, r)
		}
		// The first is refused by Bedrock, then served by the backup; the
		// second skips Bedrock during its Retry-After.
		if n, want := len(e.backendRequests()), map[bool]int{false: 2, true: 1}[st]; n != want {
			t.Errorf("fallback: %d backend requests, want %d", n, want)
		}
	}
	assertNoBedrockSecrets(t, e)
}

// assertNoBedrockSecrets greps Caddy's debug log and the recordings for
// the secrets the tests configured.
func assertNoBedrockSecrets(t *testing.T, e *bedrockEnv) {
	t.Helper()
	e.assertNoSecrets(t, bedrockTestSecret, bedrockTestSession, bedrockTestAPIKey)
}

// TestIntegrationBedrockEchoedCredentials: a Bedrock that quotes the
// access key id and session token it was signed with in an error, at once
// or in the stream, has neither reach the client nor the recording: the
// aws_sigv4 module names them to the scrubbers (auth.SecretSource).
func TestIntegrationBedrockEchoedCredentials(t *testing.T) {
	e := startBedrockEnv(t)
	for _, tt := range []struct {
		scenario string
		stream   bool
	}{{"error_echo_key", false}, {"stream_error_echo_key", true}} {
		body := `{"model":"claude-bedrock-1","max_tokens":10,"stream":` + strconv.FormatBool(tt.stream) + `,"messages":[{"role":"user","content":"hi"}]}`
		resp := post(t, e.louter+"/v1/messages", body, "X-Mock-Scenario", tt.scenario)
		raw, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(raw), "Incorrect API key provided") {
			t.Fatalf("%s: the mock's error did not come through: %d %s", tt.scenario, resp.StatusCode, raw)
		}
		for _, secret := range []string{bedrockTestAKID, bedrockTestSession} {
			if strings.Contains(string(raw), secret) {
				t.Errorf("%s: the client's answer holds %q: %s", tt.scenario, secret, raw)
			}
		}
	}
	e.assertNoSecrets(t, bedrockTestAKID, bedrockTestSession)
}

// TestIntegrationBedrockDiagnosticsProbe: the diagnostics probe proves a
// Bedrock backend's credential: good SigV4 keys and a good API key are
// authorized, a wrong secret or region is reachable but not authorized
// (Bedrock's runtime serves no model list, so a GET /models could not
// tell them apart).
func TestIntegrationBedrockDiagnosticsProbe(t *testing.T) {
	setBedrockEnv(t)
	out := newCaddyOutput(t)
	admin := testcaddy.FreePorts(t, 1)[0]
	opts := out.options()
	opts.AdminPort = admin
	startMockEnv(t, opts, strings.ReplaceAll(bedrockCaddyfile, "{RECORD}", out.recordDir), 2)
	testcaddy.WaitListening(t, admin)
	body := testcaddy.Get(t, testcaddy.URL(admin)+"/louter/diagnostics?probe=1")
	want := map[string]bool{"bedrock": true, "bedrock-key": true, "bedrock-betas": true, "bedrock-wrong-secret": false, "bedrock-wrong-region": false}
	for _, b := range gjson.GetBytes(body, "handlers.0.backends").Array() {
		name := b.Get("name").Str
		ok, listed := want[name]
		if !listed {
			continue
		}
		delete(want, name)
		if !b.Get("probe.reachable").Bool() || !b.Get("probe.authorized").Exists() || b.Get("probe.authorized").Bool() != ok {
			t.Errorf("%s: probe %s, want reachable and authorized %v", name, b.Get("probe").Raw, ok)
		}
		if !ok && b.Get("probe.status").Int() != http.StatusForbidden {
			t.Errorf("%s: probe status %d, want 403", name, b.Get("probe.status").Int())
		}
	}
	if len(want) > 0 {
		t.Errorf("backends missing from the report: %v in %s", want, body)
	}
	for _, s := range []string{bedrockTestSecret, bedrockTestSession, bedrockTestAPIKey} {
		if strings.Contains(string(body), s) {
			t.Errorf("the report shows %q", s)
		}
	}
}
