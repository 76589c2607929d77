package caddymodule_test

// The cloud backends through a real Caddy: vertex_anthropic,
// vertex_gemini (OAuth2 tokens from a service account key, and express
// mode's API key), azure_openai (v1 with api-key, classic deployments
// with an Entra ID token) and azure_openai_responses, each asked by the
// official SDK of every client protocol, streaming and not, with tools.
// The cloud side is internal/cloudmock: a token endpoint that verifies
// the service account's signed JWT assertion, an Entra authority over
// TLS, and a front that accepts only the tokens they issued and the
// cloud's own URL and body shapes before handing the request to
// louter_mock. Secrets never appear in Caddy's debug log or in the
// recording.

import (
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"

	"github.com/louter/louter/caddymodule"
	"github.com/louter/louter/internal/cloudmock"
	"github.com/louter/louter/internal/testcaddy"
)

// Secrets of the cloud tests, which must never be written anywhere.
const (
	cloudAzureKey    = "azure-api-key-5ecret-0f-the-test"
	cloudAzureSecret = "entra-client-5ecret-0f-the-test"
	cloudExpressKey  = "vertex-express-5ecret-key"
)

// cloudSite is louter on {PORT0} with the cloud tests' settings and the
// given backends and models, in front of cloudmock's front ({FRONT}),
// which hands the requests it accepts to louter_mock on {PORT1}, named
// mock.
func cloudSite(mock, directives string) string {
	return `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario
		record {RECORD}` + directives + `
	}
}
` + mockSite(":{PORT1}", mock)
}

// azureKeyBackend is Azure OpenAI's v1 API with an API key.
const azureKeyBackend = `
		backend az_v1 {
			protocol azure_openai
			api_key {env.LOUTER_TEST_AZURE_KEY}
			reverse_proxy {FRONT}
		}`

var cloudCaddyfile = cloudSite("cloud-mock",
	vertexBackend("vtx_claude", "vertex_anthropic", "{CREDS}")+
		vertexBackend("vtx_gemini", "vertex_gemini", "{CREDS}")+`
		backend vtx_express {
			protocol vertex_gemini
			api_key {env.LOUTER_TEST_VERTEX_EXPRESS_KEY}
			reverse_proxy {FRONT}
		}
`+azureKeyBackend+`
		backend az_classic {
			protocol azure_openai
			azure {
				api_version 2024-10-21
			}
			`+entraAuth()+`
			reverse_proxy {FRONT}
		}
		backend az_resp {
			protocol azure_openai_responses
			`+entraAuth()+`
			reverse_proxy {FRONT}
		}
		backend foundry_claude {
			protocol anthropic
			base_path /anthropic/v1
			`+entraAuth("scopes https://ai.azure.com/.default")+`
			reverse_proxy {FRONT}
		}
		model claude-vertex vtx_claude claude-sonnet-4-5@20250929
		model claude-foundry foundry_claude my-claude-deployment
		model gemini-vertex vtx_gemini gemini-2.5-pro
		model gemini-express vtx_express gemini-2.5-flash
		model gpt-azure az_v1 my-gpt-deployment
		model gpt-azure-classic az_classic my-classic-deployment
		model gpt-azure-resp az_resp my-responses-deployment`)

// cloudEnv is a louter in front of the cloud mocks.
type cloudEnv struct {
	*env
	google *cloudmock.Google
	azure  *cloudmock.Azure
	front  *cloudmock.Front
	caddyOutput
}

func startCloudEnv(t *testing.T, caddyfile string, adminPort ...int) *cloudEnv {
	t.Helper()
	t.Setenv("LOUTER_TEST_AZURE_KEY", cloudAzureKey)
	t.Setenv("LOUTER_TEST_AZURE_SECRET", cloudAzureSecret)
	t.Setenv("LOUTER_TEST_VERTEX_EXPRESS_KEY", cloudExpressKey)
	dir := t.TempDir()
	out := newCaddyOutput(t)
	g := cloudmock.NewGoogle(t)
	az := cloudmock.NewAzure(t, cloudAzureSecret)
	t.Cleanup(caddymodule.SetAzureTransport(az.Client()))
	ports := testcaddy.FreePorts(t, 2)
	front := (&cloudmock.Front{
		Mock: testcaddy.URL(ports[1]), Google: g, Project: "test-project", Location: "us-east5",
		ExpressKey: cloudExpressKey, Azure: az, AzureKey: cloudAzureKey, AzureAPIVersion: "2024-10-21",
	}).Start(t)
	ce := &cloudEnv{google: g, azure: az, front: front, caddyOutput: out}
	cf := strings.NewReplacer("{CREDS}", g.WriteCredentials(t, dir), "{FOREIGN}", g.WriteForeignCredentials(t, dir), "{FRONT}", strings.TrimPrefix(front.URL, "http://"),
		"{AUTHORITY}", az.URL+"/", "{RECORD}", ce.recordDir,
		"{PORT0}", itoa(ports[0]), "{PORT1}", itoa(ports[1])).Replace(caddyfile)
	// The ports are in cf already: the front needs the mock's first.
	opts := ce.options()
	if len(adminPort) > 0 {
		opts.AdminPort = adminPort[0]
	}
	testcaddy.StartWith(t, opts, cf)
	testcaddy.WaitListening(t, ports[0])
	testcaddy.WaitListening(t, ports[1])
	ce.env = &env{t: t, louter: testcaddy.URL(ports[0]), mocks: []string{testcaddy.URL(ports[1])}}
	return ce
}

func itoa(n int) string { return strconv.Itoa(n) }

// cloudRoutes are the models of cloudCaddyfile, with the path the front
// must see for each.
var cloudRoutes = []struct {
	model      string
	path       func(stream bool) string
	rawQuery   string
	authHeader string
}{
	{"claude-vertex", func(s bool) string {
		if s {
			return "/v1/projects/test-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
		}
		return "/v1/projects/test-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"
	}, "", "Authorization"},
	{"gemini-vertex", func(s bool) string {
		if s {
			return "/v1/projects/test-project/locations/us-east5/publishers/google/models/gemini-2.5-pro:streamGenerateContent"
		}
		return "/v1/projects/test-project/locations/us-east5/publishers/google/models/gemini-2.5-pro:generateContent"
	}, "", "Authorization"},
	{"gemini-express", func(s bool) string {
		if s {
			return "/v1beta1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
		}
		return "/v1beta1/publishers/google/models/gemini-2.5-flash:generateContent"
	}, "", "X-Goog-Api-Key"},
	{"gpt-azure", func(bool) string { return "/openai/v1/chat/completions" }, "", "Api-Key"},
	{"gpt-azure-classic", func(bool) string { return "/openai/deployments/my-classic-deployment/chat/completions" }, "api-version=2024-10-21", "Authorization"},
	{"gpt-azure-resp", func(bool) string { return "/openai/v1/responses" }, "", "Authorization"},
	{"claude-foundry", func(bool) string { return "/anthropic/v1/messages" }, "", "Authorization"},
}

// cloudClients call louter in each client protocol with the tool
// scenario and return what the client understood.
var cloudClients = []struct {
	name string
	call func(e *env, model string, stream bool) (result, error)
}{
	{"anthropic", func(e *env, model string, stream bool) (result, error) {
		return callAnthropic(e, model, "tool", stream)
	}},
	{"openai_chat", func(e *env, model string, stream bool) (result, error) { return callOpenAI(e, model, "tool", stream) }},
	{"openai_responses", func(e *env, model string, stream bool) (result, error) {
		o, err := callResponses(e, "tool", stream, responses.ResponseNewParams{
			Model: model, Tools: respWeatherTools(),
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the weather in Paris?")},
		})
		return o.result, err
	}},
	{"gemini", func(e *env, model string, stream bool) (result, error) {
		r, _, err := callGemini(e.t, e, model, "tool", stream, nil, nil)
		return r, err
	}},
}

// TestCloudBackendsEveryClient: every client protocol × every cloud
// backend, streaming and not: the tool call arrives, the cloud saw its own
// URL and credential (never refused), and no secret reached the log or
// the recording.
func TestCloudBackendsEveryClient(t *testing.T) {
	ce := startCloudEnv(t, cloudCaddyfile)
	for _, route := range cloudRoutes {
		for _, client := range cloudClients {
			for _, stream := range []bool{false, true} {
				name := route.model + "/" + client.name
				if stream {
					name += "/stream"
				}
				t.Run(name, func(t *testing.T) {
					ce.front.Requests()
					r, err := client.call(ce.env, route.model, stream)
					if err != nil {
						t.Fatalf("call: %v (front saw %+v)", err, summarize(ce.front.Requests()))
					}
					if len(r.toolNames) != 1 || r.toolNames[0] != "get_weather" || !strings.Contains(r.toolArgs[0], `"city"`) {
						t.Errorf("tool calls %v %v, want get_weather with a city", r.toolNames, r.toolArgs)
					}
					if r.stop != "tool_use" && (client.name != "gemini" || r.stop != "STOP") {
						t.Errorf("stop %q, want tool_use", r.stop)
					}
					if r.in == 0 || r.out == 0 {
						t.Errorf("usage in=%d out=%d, want both reported", r.in, r.out)
					}
					reqs := ce.front.Requests()
					if len(reqs) != 1 {
						t.Fatalf("the front got %d requests, want 1: %+v", len(reqs), summarize(reqs))
					}
					got := reqs[0]
					if got.Status != 0 || got.Path != route.path(stream) || got.RawQuery != wantQuery(route.rawQuery, route.model, stream) {
						t.Errorf("front got %s %s?%s (answered %d itself), want %s?%s", got.Method, got.Path, got.RawQuery, got.Status, route.path(stream), wantQuery(route.rawQuery, route.model, stream))
					}
					if got.Header.Get(route.authHeader) == "" {
						t.Errorf("no %s header: %v", route.authHeader, got.Header)
					}
					for _, h := range []string{"X-Api-Key", "Anthropic-Version"} {
						if route.authHeader != h && got.Header.Get(h) != "" && strings.HasPrefix(route.model, "gpt") {
							t.Errorf("%s sent to Azure", h)
						}
					}
				})
			}
		}
	}
	// One token per backend's credentials for all its requests: cached.
	if n := len(ce.google.Issued()); n != 2 {
		t.Errorf("the Google token endpoint issued %d tokens for the two Vertex backends, want 2 (cached; refused: %v)", n, ce.google.Refused())
	}
	if n := ce.azure.IssuedCount(); n != 3 {
		t.Errorf("the Entra authority issued %d tokens for the three Entra backends, want 3 (cached; refused: %v)", n, ce.azure.Refused())
	}
	ce.checkNoSecrets(t)
}

// wantQuery is the query the front must see: Gemini streams ask for SSE.
func wantQuery(base, model string, stream bool) string {
	if stream && strings.HasPrefix(model, "gemini") {
		return "alt=sse"
	}
	return base
}

func summarize(reqs []cloudmock.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Method+" "+r.Path+"?"+r.RawQuery+" → "+itoa(r.Status))
	}
	return out
}

// checkNoSecrets greps Caddy's debug log and the recording for every
// secret the test used: the service account's private key, the access
// tokens issued, the Azure key and client secret, the express key.
func (ce *cloudEnv) checkNoSecrets(t *testing.T) {
	t.Helper()
	ce.assertNoSecrets(t, ce.google.PrivateKeyPEMLine(), cloudAzureKey, cloudAzureSecret, cloudExpressKey, "ya29.louter-test-", "entra-louter-test-")
}

// TestCloudAzureContentFilter: Azure's content filter reaches every
// client as its own protocol's answer — a filtered prompt as a 400
// invalid request error (code content_filter where the protocol has
// codes), a filtered output as a refusal — and the quirky chunks of
// Azure's streams (empty choices, filter results only) are skipped.
func TestCloudAzureContentFilter(t *testing.T) {
	ce := startCloudEnv(t, cloudCaddyfile)
	t.Run("prompt filtered", func(t *testing.T) {
		for _, stream := range []bool{false, true} {
			_, err := callOpenAI(ce.env, "gpt-azure", "text", stream, openai.UserMessage("Tell me a story "+cloudmock.FilterPrompt))
			var oe *openai.Error
			if !errors.As(err, &oe) || oe.StatusCode != http.StatusBadRequest || oe.Code != "content_filter" || !strings.Contains(oe.Message, "content management policy") {
				t.Errorf("openai stream=%v: %v, want a 400 content_filter", stream, err)
			}
			_, err = callAnthropic(ce.env, "gpt-azure", "text", stream, anthropic.NewUserMessage(anthropic.NewTextBlock("Tell me a story "+cloudmock.FilterPrompt)))
			var ae *anthropic.Error
			if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || gjson.Get(ae.RawJSON(), "error.type").Str != "invalid_request_error" {
				t.Errorf("anthropic stream=%v: %v, want a 400 invalid_request_error", stream, err)
			}
			_, err = callResponses(ce.env, "text", stream, responses.ResponseNewParams{Model: "gpt-azure-resp",
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Tell me a story " + cloudmock.FilterPrompt)}})
			if !errors.As(err, &oe) || oe.StatusCode != http.StatusBadRequest || oe.Code != "content_filter" {
				t.Errorf("responses stream=%v: %v, want a 400 content_filter", stream, err)
			}
			_, _, err = callGemini(t, ce.env, "gpt-azure", "text", stream, genai.Text("Tell me a story "+cloudmock.FilterPrompt), nil)
			var ge genai.APIError
			if !errors.As(err, &ge) || ge.Code != http.StatusBadRequest || ge.Status != "INVALID_ARGUMENT" {
				t.Errorf("gemini stream=%v: %v, want a 400 INVALID_ARGUMENT", stream, err)
			}
		}
	})
	t.Run("output filtered", func(t *testing.T) {
		for _, stream := range []bool{false, true} {
			r, err := callAnthropic(ce.env, "gpt-azure", "text", stream, anthropic.NewUserMessage(anthropic.NewTextBlock("Tell me a story "+cloudmock.FilterOutput)))
			if err != nil || r.stop != "refusal" || r.text != "The story begins" {
				t.Errorf("anthropic stream=%v: %+v %v, want the text so far and stop refusal", stream, r, err)
			}
			r, err = callOpenAI(ce.env, "gpt-azure-classic", "text", stream, openai.UserMessage("Tell me a story "+cloudmock.FilterOutput))
			if err != nil || r.stop != "content_filter" || r.text != "The story begins" {
				t.Errorf("openai stream=%v: %+v %v, want finish_reason content_filter", stream, r, err)
			}
			_, finish, err := callGemini(t, ce.env, "gpt-azure", "text", stream, genai.Text("Tell me a story "+cloudmock.FilterOutput), nil)
			if err != nil || finish != "SAFETY" {
				t.Errorf("gemini stream=%v: finish %q %v, want SAFETY", stream, finish, err)
			}
			o, err := callResponses(ce.env, "text", stream, responses.ResponseNewParams{Model: "gpt-azure",
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Tell me a story " + cloudmock.FilterOutput)}})
			if err != nil || o.final.Get("status").Str != "incomplete" || o.final.Get("incomplete_details.reason").Str != "content_filter" {
				t.Errorf("responses stream=%v: %s %v, want incomplete content_filter", stream, o.final.Raw, err)
			}
		}
	})
	ce.checkNoSecrets(t)
}

var vertexOnlyCaddyfile = cloudSite("cloud-mock-expiry", vertexBackend("vtx_claude", "vertex_anthropic", "{CREDS}")+`
		model claude-vertex vtx_claude claude-sonnet-4-5@20250929`)

// TestCloudVertexTokenRefresh: a token that expires is replaced: the
// second request, after the first token's expiry, carries a second token
// obtained with a fresh signed assertion, and the front refuses the first.
func TestCloudVertexTokenRefresh(t *testing.T) {
	ce := startCloudEnv(t, vertexOnlyCaddyfile)
	ce.google.ExpiresIn.Store(1)
	ask := func() string {
		t.Helper()
		ce.front.Requests()
		if _, err := callAnthropic(ce.env, "claude-vertex", "text", true); err != nil {
			t.Fatalf("call: %v", err)
		}
		reqs := ce.front.Requests()
		if len(reqs) != 1 || reqs[0].Status != 0 {
			t.Fatalf("front: %v", summarize(reqs))
		}
		return strings.TrimPrefix(reqs[0].Header.Get("Authorization"), "Bearer ")
	}
	first := ask()
	time.Sleep(1100 * time.Millisecond)
	if ce.google.Valid(first) {
		t.Fatal("the first token is still valid")
	}
	// The front refuses the expired token.
	req, _ := http.NewRequest(http.MethodPost, ce.front.URL+"/v1/projects/test-project/locations/us-east5/publishers/anthropic/models/claude-x:rawPredict",
		strings.NewReader(`{"anthropic_version":"vertex-2023-10-16","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+first)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the expired token got %d, want 401", resp.StatusCode)
	}
	second := ask()
	if second == first || !ce.google.Valid(second) {
		t.Errorf("second request's token %q (first %q), want a new valid one", second, first)
	}
	if issued := ce.google.Issued(); len(issued) < 2 || issued[0] != first {
		t.Errorf("issued %v", issued)
	}
	ce.checkNoSecrets(t)
}

// TestCloudVertexWrongKey: credentials whose key the token endpoint does
// not know get no token (the endpoint verifies the assertion's
// signature), and the client gets an error in its own protocol, not a
// hang or an empty answer; neither key is logged.
func TestCloudVertexWrongKey(t *testing.T) {
	ce := startCloudEnv(t, strings.Replace(vertexOnlyCaddyfile, "credentials_file {CREDS}", "credentials_file {FOREIGN}", 1))
	for _, stream := range []bool{false, true} {
		_, err := callAnthropic(ce.env, "claude-vertex", "text", stream)
		var ae *anthropic.Error
		if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadGateway || gjson.Get(ae.RawJSON(), "type").Str != "error" {
			t.Errorf("stream=%v: %v, want a 502 in Anthropic's error shape", stream, err)
		}
	}
	if reqs := ce.front.Requests(); len(reqs) != 0 {
		t.Errorf("the front got %v without a token", summarize(reqs))
	}
	refused := ce.google.Refused()
	if len(refused) == 0 || !strings.Contains(refused[0], "signature") {
		t.Errorf("token endpoint refusals %q, want a bad signature", refused)
	}
	if len(ce.google.Issued()) != 0 {
		t.Errorf("tokens issued to a foreign key: %v", ce.google.Issued())
	}
	log, _ := os.ReadFile(ce.logFile)
	if !strings.Contains(string(log), "auth google: obtaining an access token") {
		t.Errorf("the log does not say why the backend failed")
	}
	if strings.Contains(string(log), "PRIVATE KEY") || strings.Contains(string(log), "assertion=") {
		t.Errorf("the log shows the key or the assertion")
	}
}

// TestCloudDiagnosticsProbe: the diagnostics probe reaches every cloud
// backend with its credential — a token is obtained for the OAuth ones —
// and its report shows none of them.
func TestCloudDiagnosticsProbe(t *testing.T) {
	admin := testcaddy.FreePorts(t, 1)[0]
	ce := startCloudEnv(t, cloudCaddyfile, admin)
	testcaddy.WaitListening(t, admin)
	ce.front.Requests()
	body := testcaddy.Get(t, testcaddy.URL(admin)+"/louter/diagnostics?probe=1")
	for _, s := range []string{cloudAzureKey, cloudAzureSecret, cloudExpressKey, "ya29.louter-test-", "entra-louter-test-"} {
		if strings.Contains(string(body), s) {
			t.Errorf("the report shows %q", s)
		}
	}
	backends := gjson.GetBytes(body, "handlers.0.backends").Array()
	if len(backends) != 7 {
		t.Fatalf("%d backends in %s", len(backends), body)
	}
	auths := map[string]int{}
	for _, b := range backends {
		auths[b.Get("auth").Str]++
		if !b.Get("probe.reachable").Bool() || !b.Get("probe.authorized").Bool() {
			t.Errorf("%s not reachable and authorized: %s", b.Get("name").Str, b.Raw)
		}
	}
	// A backend signed by an auth module names it (it has no key of its
	// own to report as configured).
	for _, name := range []string{"google", "azure"} {
		if auths[name] == 0 {
			t.Errorf("no backend reports auth %q: %v", name, auths)
		}
	}
	// Each probe carried the backend's credential: the front refused none
	// for want of one (its 401s), though it serves no model list (404).
	reqs := ce.front.Requests()
	if len(reqs) != 7 {
		t.Errorf("the front got %d probes: %v", len(reqs), summarize(reqs))
	}
	for _, r := range reqs {
		if r.Status == http.StatusUnauthorized {
			t.Errorf("probe %s %s was refused its credential", r.Method, r.Path)
		}
		if r.Header.Get("Authorization") == "" && r.Header.Get("Api-Key") == "" && r.Header.Get("X-Goog-Api-Key") == "" {
			t.Errorf("probe %s %s carried no credential", r.Method, r.Path)
		}
	}
	// A classic Azure deployment API answers nothing without its
	// api-version: the probe of az_classic names it.
	classic := 0
	for _, r := range reqs {
		if r.Path == "/openai/models" {
			classic++
			if r.RawQuery != "api-version=2024-10-21" {
				t.Errorf("classic Azure probe %s?%s, want api-version=2024-10-21", r.Path, r.RawQuery)
			}
		}
	}
	if classic != 1 {
		t.Errorf("%d probes of /openai/models (az_classic), want 1: %v", classic, summarize(reqs))
	}
}
