package caddymodule_test

// Streams are counted whether or not they report usage: an OpenAI Chat
// passthrough stream whose client did not ask for usage is asked for it
// (and the client does not see the extra chunk), and a stream that ends
// without usage — cut before its end — is counted on an estimate, never
// as free.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/caddymodule"
	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/limits"
	"github.com/louter/louter/record"
)

// streamUsageCaddyfile: su-frugal and su-asker have the same small budget,
// priced at a micro-dollar a token; su-ledger has no limit, only the
// ledger. The client names are this file's own: the ledger is the
// process's.
const streamUsageCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		client su-frugal {
			key_env LOUTER_TEST_SU_FRUGAL
			budget 0.0003usd/30d
		}
		client su-asker {
			key_env LOUTER_TEST_SU_ASKER
			budget 0.0003usd/30d
		}
		client su-ledger {
			key_env LOUTER_TEST_SU_LEDGER
		}
		price su-* input 1 output 1
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend anth {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model su-oai oai
		model su-anth anth
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name stream-usage-mock
	}
}
`

func startStreamUsageEnv(t *testing.T) *env {
	t.Setenv("LOUTER_TEST_SU_FRUGAL", "su-frugal-key")
	t.Setenv("LOUTER_TEST_SU_ASKER", "su-asker-key")
	t.Setenv("LOUTER_TEST_SU_LEDGER", "su-ledger-key")
	return startMockEnv(t, testcaddy.Options{}, streamUsageCaddyfile, 1)
}

// ledgerEntry returns the ledger's entry for client and model, zero when
// there is none.
func ledgerEntry(t *testing.T, client, model string) limits.LedgerEntry {
	t.Helper()
	rec := httptest.NewRecorder()
	route := caddymodule.UsageAdmin{}.Routes()[0]
	if err := route.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, route.Pattern, nil)); err != nil {
		t.Fatal(err)
	}
	var rep limits.LedgerReport
	if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	c := rep.Clients[client]
	if c == nil || c.Models[model] == nil {
		return limits.LedgerEntry{}
	}
	return *c.Models[model]
}

// streamUntilRefused streams OpenAI Chat requests with key until one is
// refused, at most n; it returns how many were answered and the answered
// streams' events.
func streamUntilRefused(t *testing.T, e *env, key, body string, n int) (int, []gjson.Result) {
	t.Helper()
	var events []gjson.Result
	for i := range n {
		resp := post(t, e.louter+"/v1/chat/completions", body, "Authorization", "Bearer "+key)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusTooManyRequests {
			if gjson.GetBytes(b, "error.code").Str != "insufficient_quota" {
				t.Fatalf("refusal %d: %s", i, b)
			}
			return i, events
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, b)
		}
		for line := range strings.Lines(string(b)) {
			if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok && data != "[DONE]" {
				events = append(events, gjson.Parse(data))
			}
		}
	}
	return n, events
}

// TestIntegrationStreamUsageBudget: a budget stops an OpenAI Chat
// passthrough stream whose client did not ask for usage after as many
// requests as it stops one whose client did. (Before, the first was
// charged nothing: 30 of 30 passed.) The backend is asked for usage; the
// client that did not ask gets no usage chunk, the one that did gets it.
func TestIntegrationStreamUsageBudget(t *testing.T) {
	e := startStreamUsageEnv(t)
	const (
		silent = `{"model":"su-oai","stream":true,"messages":[{"role":"user","content":"hi"}]}`
		asking = `{"model":"su-oai","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	)
	e.clearJournals()
	answered, events := streamUntilRefused(t, e, "su-frugal-key", silent, 30)
	if answered == 30 {
		t.Fatal("30 of 30 streams without include_usage passed a budget of 0.0003 USD: they were charged nothing")
	}
	for _, r := range e.backendRequests() {
		if r.Get("body.stream_options.include_usage").Type != gjson.True {
			t.Fatalf("the backend was not asked for usage: %s", r.Get("body").Raw)
		}
	}
	for _, ev := range events {
		if ev.Get("usage").IsObject() || !ev.Get("choices.0").Exists() {
			t.Fatalf("the client that did not ask for usage got %s", ev.Raw)
		}
	}
	askerAnswered, askerEvents := streamUntilRefused(t, e, "su-asker-key", asking, 30)
	t.Logf("the budget stopped the client not asking for usage after %d streams, the one asking after %d", answered, askerAnswered)
	if askerAnswered != answered {
		t.Errorf("the budget stopped a client asking for usage after %d streams, one not asking after %d", askerAnswered, answered)
	}
	usages := 0
	for _, ev := range askerEvents {
		if ev.Get("usage").IsObject() {
			usages++
		}
	}
	if usages != askerAnswered {
		t.Errorf("the client that asked for usage got %d usage chunks in %d streams", usages, askerAnswered)
	}
	if le := ledgerEntry(t, "su-frugal", "su-oai"); le.Requests != int64(answered) || le.EstimatedRequests != 0 || le.OutputTokens == 0 {
		t.Errorf("su-frugal's ledger entry: %+v", le)
	}
}

// TestIntegrationStreamUsageCut: a stream cut before its usage is counted
// on an estimate — the input's and the streamed output's — in the ledger
// and the budget, never as zero: an OpenAI Chat passthrough, an OpenAI Chat
// client of an Anthropic backend, and an Anthropic passthrough, whose
// message_start reported one output token.
func TestIntegrationStreamUsageCut(t *testing.T) {
	e := startStreamUsageEnv(t)
	for _, tt := range []struct {
		name, path, model, body string
		headers                 []string
	}{
		{"openai_chat passthrough", "/v1/chat/completions", "su-oai",
			`{"model":"su-oai","stream":true,"messages":[{"role":"user","content":"[mock:stream_cut] hi"}]}`, []string{"Authorization", "Bearer su-ledger-key"}},
		{"openai_chat to anthropic", "/v1/chat/completions", "su-anth",
			`{"model":"su-anth","stream":true,"messages":[{"role":"user","content":"[mock:stream_cut] hi"}]}`, []string{"Authorization", "Bearer su-ledger-key"}},
		{"anthropic passthrough", "/v1/messages", "su-anth",
			`{"model":"su-anth","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"[mock:stream_cut] hi"}]}`, []string{"X-Api-Key", "su-ledger-key", "Anthropic-Version", "2023-06-01"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prev := ledgerEntry(t, "su-ledger", tt.model)
			resp := post(t, e.louter+tt.path, tt.body, tt.headers...)
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "error") {
				t.Fatalf("want a stream ending with an error: %d %s", resp.StatusCode, b)
			}
			le := ledgerEntry(t, "su-ledger", tt.model)
			in, out := le.InputTokens-prev.InputTokens, le.OutputTokens-prev.OutputTokens
			if le.Requests != prev.Requests+1 || le.EstimatedRequests != prev.EstimatedRequests+1 || in <= 0 || out <= 1 {
				t.Errorf("the cut stream was counted as %d input and %d output tokens (%+v)", in, out, le)
			}
			if cost := le.CostUSD - prev.CostUSD; cost <= 0 {
				t.Errorf("the cut stream cost %v", cost)
			}
		})
	}
}

// TestIntegrationStreamUsageReplays: a recording of a passthrough stream
// louter asked for usage replays cleanly: the replay asks as louter did
// and leaves the usage chunk out of the client's events.
func TestIntegrationStreamUsageReplays(t *testing.T) {
	t.Setenv("LOUTER_TEST_SU_REC", "su-rec-key")
	dir := filepath.Join(t.TempDir(), "rec")
	ports := testcaddy.Start(t, fmt.Sprintf(`
:{PORT0} {
	bind 127.0.0.1
	louter {
		client su-rec {
			key_env LOUTER_TEST_SU_REC
		}
		price * input 1 output 1
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model * oai
		record %q
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name stream-usage-rec
	}
}
`, dir))
	testcaddy.WaitListening(t, ports[1])
	resp := post(t, testcaddy.URL(ports[0])+"/v1/chat/completions", `{"model":"su-rec","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "Authorization", "Bearer su-rec-key")
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK || strings.Contains(string(b), `"choices":[]`) {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	x := readRecording(t, dir, 1)[0]
	if res := record.Replay(x, record.Options{}); !res.OK() {
		t.Errorf("the recording does not replay: %s %v", res.Skipped, res.Diffs)
	}
}
