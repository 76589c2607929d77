package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/louter/louter/translate"
)

func TestConversationKey(t *testing.T) {
	tests := []struct {
		name   string
		p      translate.Protocol
		header http.Header
		body   string
		want   string // exact, or a prefix when it ends with ':'
	}{
		{"claude code json user_id", translate.ProtocolAnthropic, nil, string(readTestdata(t, "anthropic/request_claude_code.json")), "session:0b6d3c8e-7f2a-4e1b-9c5d-3a8f6e2b1c4d"},
		{"claude code older user_id", translate.ProtocolAnthropic, nil, `{"metadata":{"user_id":"user_abc_account__session_1234-5678"},"messages":[{"role":"user","content":"hi"}]}`, "session:1234-5678"},
		{"anthropic user without session: hash", translate.ProtocolAnthropic, nil, `{"metadata":{"user_id":"user-7"},"messages":[{"role":"user","content":"hi"}]}`, "hash:"},
		{"codex prompt_cache_key", translate.ProtocolOpenAIResponses, nil, string(readTestdata(t, "openai_responses/request_codex.json")), "cache:01a20170-8d9e-7f72-be2d-8c4f030f807d"},
		{"responses session header", translate.ProtocolOpenAIResponses, http.Header{"Session_id": {"s-1"}}, `{"input":"hi"}`, "session:s-1"},
		{"chat prompt_cache_key", translate.ProtocolOpenAIChat, nil, `{"prompt_cache_key":"k","messages":[{"role":"user","content":"hi"}]}`, "cache:k"},
		{"opencode anthropic provider", translate.ProtocolAnthropic, http.Header{"X-Session-Id": {"ses_a"}, "X-Session-Affinity": {"ses_a"}}, `{"messages":[{"role":"user","content":"hi"}]}`, "session:ses_a"},
		{"claude code session wins over a session header", translate.ProtocolAnthropic, http.Header{"X-Session-Id": {"ses_a"}}, `{"metadata":{"user_id":"user_abc_account__session_cc-1"},"messages":[{"role":"user","content":"hi"}]}`, "session:cc-1"},
		{"opencode openai-compatible provider", translate.ProtocolOpenAIChat, http.Header{"X-Session-Id": {"ses_b"}}, `{"messages":[{"role":"user","content":"hi"}]}`, "session:ses_b"},
		{"opencode google provider", translate.ProtocolGemini, http.Header{"X-Session-Affinity": {"ses_c"}}, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, "session:ses_c"},
		{"opencode's own provider", translate.ProtocolAnthropic, http.Header{"X-Opencode-Session": {"ses_d"}}, `{"messages":[{"role":"user","content":"hi"}]}`, "session:ses_d"},
		{"gemini cli: hash", translate.ProtocolGemini, nil, string(readTestdata(t, "gemini/request_gemini_cli.json")), "hash:"},
		{"no text at all", translate.ProtocolAnthropic, nil, `{"messages":[]}`, ""},
		{"empty body", translate.ProtocolAnthropic, nil, ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := conversationKey(tt.p, tt.header, []byte(tt.body))
			if strings.HasSuffix(tt.want, ":") {
				if !strings.HasPrefix(got, tt.want) || len(got) != len(tt.want)+16 {
					t.Fatalf("key = %q, want %q and 16 hex digits", got, tt.want)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("key = %q, want %q", got, tt.want)
			}
		})
	}
}

// The hash stays the same as the conversation grows and as Claude Code
// moves its cache_control breakpoint, and differs between conversations.
func TestConversationHashFollowsTheConversation(t *testing.T) {
	tests := []struct {
		name       string
		p          translate.Protocol
		turn1      string
		turn2      string
		otherConvo string
	}{
		{"anthropic", translate.ProtocolAnthropic,
			`{"system":[{"type":"text","text":"You are X."}],"messages":[{"role":"user","content":[{"type":"text","text":"fix the bug","cache_control":{"type":"ephemeral"}}]}]}`,
			`{"system":[{"type":"text","text":"You are X."}],"messages":[{"role":"user","content":[{"type":"text","text":"fix the bug"}]},{"role":"assistant","content":"done"},{"role":"user","content":[{"type":"text","text":"thanks","cache_control":{"type":"ephemeral"}}]}]}`,
			`{"system":[{"type":"text","text":"You are X."}],"messages":[{"role":"user","content":"write a test"}]}`},
		{"openai chat", translate.ProtocolOpenAIChat,
			`{"messages":[{"role":"system","content":"You are X."},{"role":"user","content":"fix the bug"}]}`,
			`{"messages":[{"role":"system","content":"You are X."},{"role":"user","content":"fix the bug"},{"role":"assistant","content":"done"},{"role":"user","content":"thanks"}]}`,
			`{"messages":[{"role":"system","content":"You are X."},{"role":"user","content":"write a test"}]}`},
		{"gemini", translate.ProtocolGemini,
			`{"systemInstruction":{"parts":[{"text":"You are X."}]},"contents":[{"role":"user","parts":[{"text":"fix the bug"}]}]}`,
			`{"systemInstruction":{"parts":[{"text":"You are X."}]},"contents":[{"role":"user","parts":[{"text":"fix the bug"}]},{"role":"model","parts":[{"text":"done"}]},{"role":"user","parts":[{"text":"thanks"}]}]}`,
			`{"systemInstruction":{"parts":[{"text":"You are X."}]},"contents":[{"role":"user","parts":[{"text":"write a test"}]}]}`},
		{"responses", translate.ProtocolOpenAIResponses,
			`{"input":[{"role":"developer","content":"You are X."},{"role":"user","content":[{"type":"input_text","text":"fix the bug"}]}]}`,
			`{"input":[{"role":"developer","content":"You are X."},{"role":"user","content":[{"type":"input_text","text":"fix the bug"}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}]}`,
			`{"input":[{"role":"developer","content":"You are X."},{"role":"user","content":[{"type":"input_text","text":"write a test"}]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k1 := conversationKey(tt.p, nil, []byte(tt.turn1))
			k2 := conversationKey(tt.p, nil, []byte(tt.turn2))
			k3 := conversationKey(tt.p, nil, []byte(tt.otherConvo))
			if k1 == "" || k1 != k2 {
				t.Errorf("turns of one conversation: %q then %q", k1, k2)
			}
			if k3 == k1 {
				t.Errorf("another conversation has the same key %q", k3)
			}
		})
	}
}

// A session of 8 conversations of 4 turns each, replayed per client
// protocol with and without a system prompt, as an agent sends it: each
// turn's body is the whole conversation so far. A conversation's key never
// changes, and no two conversations share one. An OpenAI Chat or Responses
// conversation with no system message used to change key after its first
// turn, when its first two messages were hashed: the assistant's answer
// became part of the key.
func TestConversationKeyStableAcrossTurns(t *testing.T) {
	type turn struct{ user, assistant string }
	// body builds a turn's request: system ("" for none), the turns before
	// and the new user message.
	type builder func(system string, past []turn, user string) string
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	anthropic := func(system string, past []turn, user string) string {
		var ms []string
		for _, t := range past {
			ms = append(ms, `{"role":"user","content":[{"type":"text","text":`+q(t.user)+`}]}`, `{"role":"assistant","content":[{"type":"text","text":`+q(t.assistant)+`}]}`)
		}
		// Claude Code puts its cache breakpoint on the newest message.
		ms = append(ms, `{"role":"user","content":[{"type":"text","text":`+q(user)+`,"cache_control":{"type":"ephemeral"}}]}`)
		sys := ""
		if system != "" {
			sys = `"system":[{"type":"text","text":` + q(system) + `}],`
		}
		return `{"model":"m",` + sys + `"messages":[` + strings.Join(ms, ",") + `]}`
	}
	chat := func(system string, past []turn, user string) string {
		var ms []string
		if system != "" {
			ms = append(ms, `{"role":"system","content":`+q(system)+`}`)
		}
		for _, t := range past {
			ms = append(ms, `{"role":"user","content":`+q(t.user)+`}`, `{"role":"assistant","content":`+q(t.assistant)+`}`)
		}
		ms = append(ms, `{"role":"user","content":`+q(user)+`}`)
		return `{"model":"m","messages":[` + strings.Join(ms, ",") + `]}`
	}
	responses := func(system string, past []turn, user string) string {
		var ms []string
		if system != "" {
			ms = append(ms, `{"role":"developer","content":`+q(system)+`}`)
		}
		for _, t := range past {
			ms = append(ms, `{"role":"user","content":[{"type":"input_text","text":`+q(t.user)+`}]}`,
				`{"type":"message","role":"assistant","content":[{"type":"output_text","text":`+q(t.assistant)+`}]}`)
		}
		ms = append(ms, `{"role":"user","content":[{"type":"input_text","text":`+q(user)+`}]}`)
		return `{"model":"m","input":[` + strings.Join(ms, ",") + `]}`
	}
	responsesInstructions := func(system string, past []turn, user string) string {
		b := responses("", past, user)
		if system == "" {
			return b
		}
		return `{"instructions":` + q(system) + `,` + b[1:]
	}
	gemini := func(system string, past []turn, user string) string {
		var ms []string
		for _, t := range past {
			ms = append(ms, `{"role":"user","parts":[{"text":`+q(t.user)+`}]}`, `{"role":"model","parts":[{"text":`+q(t.assistant)+`}]}`)
		}
		ms = append(ms, `{"role":"user","parts":[{"text":`+q(user)+`}]}`)
		sys := ""
		if system != "" {
			sys = `"systemInstruction":{"parts":[{"text":` + q(system) + `}]},`
		}
		return `{` + sys + `"contents":[` + strings.Join(ms, ",") + `]}`
	}
	protocols := []struct {
		name  string
		p     translate.Protocol
		build builder
	}{
		{"anthropic", translate.ProtocolAnthropic, anthropic},
		{"openai chat", translate.ProtocolOpenAIChat, chat},
		{"openai responses", translate.ProtocolOpenAIResponses, responses},
		{"openai responses instructions", translate.ProtocolOpenAIResponses, responsesInstructions},
		{"gemini", translate.ProtocolGemini, gemini},
	}
	for _, pr := range protocols {
		for _, system := range []string{"", "You are a careful coding agent."} {
			t.Run(fmt.Sprintf("%s system=%t", pr.name, system != ""), func(t *testing.T) {
				seen := map[string]int{}
				for c := range 8 {
					var past []turn
					first := ""
					for n := range 4 {
						user := fmt.Sprintf("conversation %d, request %d", c, n)
						key := conversationKey(pr.p, nil, []byte(pr.build(system, past, user)))
						if !strings.HasPrefix(key, "hash:") {
							t.Fatalf("conversation %d turn %d: key %q, want a hash", c, n+1, key)
						}
						if n == 0 {
							first = key
						} else if key != first {
							t.Fatalf("conversation %d turn %d: key %q, was %q at turn 1", c, n+1, key, first)
						}
						past = append(past, turn{user, fmt.Sprintf("answer %d to conversation %d", n, c)})
					}
					if other, ok := seen[first]; ok {
						t.Fatalf("conversations %d and %d share key %q", other, c, first)
					}
					seen[first] = c
				}
			})
		}
	}
}

func TestSetConversation(t *testing.T) {
	hashOnly := []byte(`{"messages":[{"role":"user","content":"hi"}]}`)
	session := []byte(`{"metadata":{"user_id":"{\"session_id\":\"s1\"}"},"messages":[{"role":"user","content":"hi"}]}`)
	tests := []struct {
		name      string
		body      []byte
		hashEager bool
		want      string // "" : no header
	}{
		{"session id: always set", session, false, "session:s1"},
		{"hash: not computed for a backend that does not read it", hashOnly, false, ""},
		{"hash: computed for lb_policy header", hashOnly, true, "hash:"},
		{"no key: a forged header is removed", []byte(`{"messages":[]}`), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodPost, "http://x/v1/messages", nil)
			r.Header.Set(ConversationHeader, "forged")
			top, _ := translate.ScanTopLevel(translate.ProtocolAnthropic, tt.body)
			setConversation(r, newConversation(translate.ProtocolAnthropic, r.Header, &top, tt.body), tt.hashEager)
			got := r.Header.Get(ConversationHeader)
			if got == "forged" || !strings.HasPrefix(got, tt.want) || (tt.want == "") != (got == "") {
				t.Fatalf("header = %q, want %q", got, tt.want)
			}
		})
	}
}

// A key that cannot be a header value (a control character in a
// prompt_cache_key) is not used.
func TestConversationKeyUnsafe(t *testing.T) {
	got := conversationKey(translate.ProtocolOpenAIChat, nil, []byte(`{"prompt_cache_key":"a\nb","messages":[{"role":"user","content":"hi"}]}`))
	if !strings.HasPrefix(got, "hash:") {
		t.Fatalf("key = %q, want the hash instead", got)
	}
}
