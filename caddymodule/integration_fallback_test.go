package caddymodule_test

// Integration tests of fallback chains, through a real Caddy with the
// official SDKs against two louter_mock backends: a primary (fb-primary,
// which plays the scenario the client names) and a backup (fb-backup,
// which always answers text, and names itself in it). Each case has
// backends of its own, so the cooldown one case starts does not reach
// another.

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// fallbackCases are the routes of the fallback Caddyfile: model <name>-*
// goes to backend <name> (anthropic, on the primary mock), then to
// <name>-backup (openai_chat, on the backup mock, asked for gpt-backup).
var fallbackCases = []string{"overloaded", "early", "truncated", "content", "ratelimit", "firstbyte", "openai", "happy"}

func fallbackCaddyfile() string {
	var b strings.Builder
	b.WriteString(`
:{PORT0} {
	bind 127.0.0.1
	louter {
		first_byte_timeout 700ms
		backend dead {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT3}
		}
		model dead-* dead {
			fallback dead-backup gpt-backup
		}
`)
	for _, name := range append(fallbackCases, "dead") {
		if name != "dead" {
			fmt.Fprintf(&b, `		backend %[1]s {
			protocol anthropic
			forward_headers X-Mock-Scenario X-Mock-Truncate X-Mock-Stall-Before X-Mock-Stall X-Mock-Stall-After
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model %[1]s-* %[1]s {
			fallback %[1]s-backup gpt-backup
		}
`, name)
		}
		fmt.Fprintf(&b, `		backend %s-backup {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT2}
		}
`, name)
	}
	b.WriteString(`	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name fb-primary
	}
}
:{PORT2} {
	bind 127.0.0.1
	louter_mock {
		name fb-backup
		default_scenario text
	}
}
`)
	return b.String()
}

func startFallbackEnv(t *testing.T) *env {
	t.Helper()
	return startMockEnv(t, testcaddy.Options{}, fallbackCaddyfile(), 2)
}

// journal returns what mock i (0: primary, 1: backup) received since the
// last clearJournals.
func (e *env) journal(i int) []gjson.Result {
	e.t.Helper()
	resp, err := testcaddy.Client.Get(e.mocks[i] + "/_mock/requests")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return gjson.ParseBytes(body).Array()
}

// askAnthropic sends one request with the Anthropic SDK, with the scenario
// and the extra mock headers given, and reads the answer.
func askAnthropic(e *env, model, scenario string, stream bool, headers ...string) (result, error) {
	var opts []aoption.RequestOption
	for i := 0; i+1 < len(headers); i += 2 {
		opts = append(opts, aoption.WithHeader(headers[i], headers[i+1]))
	}
	client := anthropicClient(e, scenario, opts...)
	params := anthropicParams(model)
	ctx := context.Background()
	var msg anthropic.Message
	if stream {
		s := client.Messages.NewStreaming(ctx, params)
		events := 0
		for s.Next() {
			events++
			if err := msg.Accumulate(s.Current()); err != nil {
				return result{}, fmt.Errorf("event %d: accumulate: %w", events, err)
			}
		}
		if err := s.Err(); err != nil {
			return result{text: textOf(msg)}, err
		}
	} else {
		m, err := client.Messages.New(ctx, params)
		if err != nil {
			return result{}, err
		}
		msg = *m
	}
	return result{text: textOf(msg), stop: string(msg.StopReason), in: msg.Usage.InputTokens, out: msg.Usage.OutputTokens}, nil
}

func textOf(m anthropic.Message) string {
	var s string
	for _, b := range m.Content {
		if b.Type == "text" {
			s += b.Text
		}
	}
	return s
}

const backupGreeting = "Hello from louter_mock (fb-backup)."

func TestIntegrationFallback(t *testing.T) {
	e := startFallbackEnv(t)

	// The backend fails before any content: the backup answers, and the
	// client sees its one clean answer, streamed or not.
	for _, tc := range []struct {
		name     string
		model    string
		scenario string
		headers  []string
		primary  int // requests the primary mock receives
	}{
		{"529 overloaded", "overloaded-1", "error_overloaded", nil, 1},
		{"error event after message_start", "early-1", "stream_error_early", nil, 1},
		{"stream ends after message_start", "truncated-1", "text", []string{"X-Mock-Truncate", "1"}, 1},
		{"silent past first_byte_timeout", "firstbyte-1", "text", []string{"X-Mock-Stall-Before", "5s"}, 1},
		{"silent after message_start", "firstbyte-2", "text", []string{"X-Mock-Stall", "5s", "X-Mock-Stall-After", "1"}, 1},
		{"dead upstream", "dead-1", "text", nil, 0},
	} {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				if strings.Contains(tc.name, "message_start") && !stream {
					t.Skip("a stream fault")
				}
				e.clearJournals()
				r, err := askAnthropic(e, tc.model, tc.scenario, stream, tc.headers...)
				if err != nil {
					t.Fatalf("the client saw an error: %v", err)
				}
				if r.text != backupGreeting || r.stop != "end_turn" {
					t.Errorf("answer %q (stop %q), want the backup's %q", r.text, r.stop, backupGreeting)
				}
				if n := len(e.journal(0)); n != tc.primary {
					t.Errorf("primary received %d requests, want %d", n, tc.primary)
				}
				backup := e.journal(1)
				if len(backup) != 1 {
					t.Fatalf("backup received %d requests, want 1", len(backup))
				}
				// Translated for the backup's protocol, with its rename, and
				// without the headers that were only for the primary.
				if got := backup[0].Get("protocol").String(); got != "openai_chat" {
					t.Errorf("backup protocol %q", got)
				}
				if got := gjson.Parse(backup[0].Get("body").Raw).Get("model").String(); got != "gpt-backup" {
					t.Errorf("backup model %q", got)
				}
				if h := backup[0].Get("headers").Raw; strings.Contains(strings.ToLower(h), "x-mock-scenario") || strings.Contains(strings.ToLower(h), "x-api-key") {
					t.Errorf("backup got the primary's headers: %s", h)
				}
			})
		}
	}

	t.Run("no fallback after content", func(t *testing.T) {
		e.clearJournals()
		r, err := askAnthropic(e, "content-1", "stream_error", true)
		if err == nil || !strings.Contains(err.Error(), "Overloaded") {
			t.Fatalf("err = %v, want the primary's overloaded error event", err)
		}
		if !strings.HasPrefix(r.text, "Hello") || strings.Contains(r.text, "fb-backup") {
			t.Errorf("text before the error %q, want the primary's first words", r.text)
		}
		if n := len(e.journal(1)); n != 0 {
			t.Errorf("backup received %d requests after content reached the client", n)
		}
	})

	t.Run("cooldown honours Retry-After", func(t *testing.T) {
		e.clearJournals()
		// error_429 answers Retry-After: 7; the next requests within those
		// seconds skip the primary.
		for i := range 3 {
			r, err := askAnthropic(e, "ratelimit-1", "error_429", i%2 == 0)
			if err != nil || r.text != backupGreeting {
				t.Fatalf("request %d: %q, %v", i, r.text, err)
			}
		}
		if n := len(e.journal(0)); n != 1 {
			t.Errorf("primary received %d requests within its Retry-After, want 1", n)
		}
		if n := len(e.journal(1)); n != 3 {
			t.Errorf("backup received %d requests, want 3", n)
		}
	})

	t.Run("OpenAI client, translated primary", func(t *testing.T) {
		e.clearJournals()
		for _, stream := range []bool{true, false} {
			r, err := callOpenAI(e, "openai-1", "stream_error_early", stream)
			if stream && (err != nil || r.text != backupGreeting || r.stop != "end_turn") {
				t.Errorf("stream: %q (stop %q), %v", r.text, r.stop, err)
			}
			if !stream && (err != nil || r.text != backupGreeting) {
				// Not streamed, the early fault is the primary's 529.
				t.Errorf("json: %q, %v", r.text, err)
			}
		}
		if got := e.journal(1)[0].Get("path").String(); got != "/v1/chat/completions" {
			t.Errorf("backup path %q", got)
		}
	})

	t.Run("happy path stays on the primary", func(t *testing.T) {
		e.clearJournals()
		start := time.Now()
		r, err := askAnthropic(e, "happy-1", "text", true)
		if err != nil || r.text != "Hello from louter_mock (fb-primary)." {
			t.Fatalf("%q, %v (%s)", r.text, err, time.Since(start))
		}
		if n := len(e.journal(1)); n != 0 {
			t.Errorf("backup received %d requests", n)
		}
	})
}
