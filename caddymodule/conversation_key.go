package caddymodule

import (
	"net/http"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// ConversationHeader is the request header louter sets, before the
// backend's upstream handler runs, to a key that stays the same for every
// turn of one conversation, so that a stock load-balancing policy can keep
// a conversation on one upstream, where its prompt cache is warm:
//
//	reverse_proxy a:8080 b:8080 {
//	    lb_policy header X-Louter-Conversation
//	}
//
// The same key is in the {http.louter.conversation} placeholder. A key
// from an agent's session id costs nothing; the hash of the first turn, for
// agents that send none, is sent in this header only to a backend whose
// lb_policy reads it (it is always in the placeholder). The header is removed
// again below reverse_proxy, so backends never see it.
const ConversationHeader = "X-Louter-Conversation"

// conversationPlaceholder is the placeholder holding the conversation key.
const conversationPlaceholder = "http.louter.conversation"

// conversation holds a request's conversation key. The key comes from
// what each agent sends:
//
//   - Claude Code: the session of metadata.user_id, a JSON string
//     {"device_id":…,"session_id":…} in recent versions,
//     user_…_account_…_session_<uuid> in older ones;
//   - Codex: prompt_cache_key (its conversation id), else its session_id
//     or conversation_id header; OpenAI Chat clients' prompt_cache_key;
//   - opencode: its session id, in X-Session-Id and X-Session-Affinity (or
//     X-Opencode-Session toward its own providers), whichever provider
//     package it speaks through: Anthropic, OpenAI (Chat) or Google;
//     qwen-code sends none to a custom base URL;
//   - otherwise (Gemini CLI sends no session id to an API-key endpoint):
//     a hash of the system prompt and the first message, which do not
//     change as a conversation grows.
//
// Keys are prefixed by their source ("session:", "cache:", "hash:") so two
// sources never collide. The first two are read in the body scan louter
// does anyway (translate.ScanTopLevel) and cost nothing; the hash reads the
// two members the scan located, when first asked for (key) or, at the
// latest, when the request is released after its answer began (release),
// so that the body need not be kept for a placeholder read at the end.
type conversation struct {
	p    translate.Protocol
	sys  translate.Span // where in body the system prompt is
	msgs translate.Span // where in body the messages are
	body []byte         // the client's body, not modified after the request is read; nil once released
	once sync.Once
	k    string
}

// newConversation reads the cheap sources of the key; the hash, if needed,
// waits for key.
func newConversation(p translate.Protocol, h http.Header, top *translate.TopLevel, body []byte) *conversation {
	c := &conversation{p: p, body: body, sys: top.SystemAt, msgs: top.MessagesAt}
	if read := rowOf(p).conversationKey; read != nil { // protocols.go
		c.k = read(h, top)
	}
	if !headerSafe(c.k) {
		c.k = ""
	}
	if c.k != "" {
		c.once.Do(func() {})
		c.body = nil // the key is known: the body is not needed here
	}
	return c
}

// release lets go of the body once the request is answered from it: the
// hash, if nobody asked for it yet, is computed now, from the few
// members it reads, so the placeholder still has it later.
func (c *conversation) release() {
	c.key()
	c.body = nil
}

// cheap returns the key when it came from a session id or cache key, ""
// when only the hash could give one.
func (c *conversation) cheap() string { return c.k }

// key returns the conversation key, hashing the first turn when the agent
// sent no id; "" when the body has no text to hash either.
func (c *conversation) key() string {
	c.once.Do(func() { c.k = firstTurnHash(c.body, c.sys, c.msgs) })
	return c.k
}

// anthropicConversationKey is the Anthropic row's conversationKey: Claude
// Code's session, from metadata.user_id or its X-Claude-Code-Session-Id
// header (the same id).
func anthropicConversationKey(h http.Header, top *translate.TopLevel) string {
	if id := claudeCodeSession(top.Metadata.Get("user_id").Str); id != "" {
		return "session:" + id
	}
	if id := h.Get("X-Claude-Code-Session-Id"); id != "" {
		return "session:" + id
	}
	return sessionHeaderKey(h, nil)
}

// openAIConversationKey is the conversationKey of the OpenAI rows: the
// prompt_cache_key (Codex sends its conversation id), else Codex's session
// or conversation header.
func openAIConversationKey(h http.Header, top *translate.TopLevel) string {
	if k := top.PromptCacheKey.Str; k != "" {
		return "cache:" + k
	}
	return sessionHeaderKey(h, nil)
}

// sessionHeaders are the headers that carry an agent's session id,
// first found wins: Codex's, then opencode's (X-Session-Id and
// X-Session-Affinity toward any provider but its own, X-Opencode-Session
// toward its own). opencode sends them whichever protocol it speaks, so
// every row reads them.
var sessionHeaders = [...]string{"Session_id", "Conversation_id", "Session-Id", "Thread-Id", "X-Session-Id", "X-Session-Affinity", "X-Opencode-Session"}

// sessionHeaderKey is the key from the first session header present, or
// "". It is the Gemini row's conversationKey, and the fallback of the
// others'.
func sessionHeaderKey(h http.Header, _ *translate.TopLevel) string {
	for _, name := range sessionHeaders {
		if v := h.Get(name); v != "" {
			return "session:" + v
		}
	}
	return ""
}

// conversationKey is the key of a body and headers, for tests and
// benchmarks: what the placeholder reads.
func conversationKey(p translate.Protocol, h http.Header, body []byte) string {
	top, err := translate.ScanTopLevel(p, body)
	if err != nil {
		return ""
	}
	return newConversation(p, h, &top, body).key()
}

// claudeCodeSession returns the session id in Claude Code's
// metadata.user_id, or "".
func claudeCodeSession(userID string) string {
	if userID == "" {
		return ""
	}
	if strings.HasPrefix(userID, "{") {
		if id := gjson.Get(userID, "session_id").Str; id != "" {
			return strings.Clone(id)
		}
		return ""
	}
	if _, id, ok := strings.Cut(userID, "_session_"); ok && id != "" {
		return strings.Clone(id)
	}
	return ""
}

// setConversation exposes the conversation key on the request
// reverse_proxy gets: as the {http.louter.conversation} placeholder, which
// computes it when first read, and as ConversationHeader, set to the cheap
// key (session id, cache key) always and to the hash too when the backend's
// lb_policy reads the header (hashEager). It runs after the header
// allowlist, which would remove the header; a client's own
// X-Louter-Conversation is replaced, or removed when there is no key (lb_policy
// header then uses its fallback), so a client cannot pick another
// conversation's upstream by sending one.
func setConversation(r *http.Request, c *conversation, hashEager bool) {
	key := c.cheap()
	if hashEager {
		key = c.key()
	}
	if key == "" {
		r.Header.Del(ConversationHeader)
	} else {
		r.Header.Set(ConversationHeader, key)
	}
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		repl.Map(func(name string) (any, bool) {
			if name != conversationPlaceholder {
				return nil, false
			}
			return c.key(), true
		})
	}
}

// headerSafe reports whether key can be a header value as it is: printable
// ASCII, and not so long that it bloats the request.
func headerSafe(key string) bool { // "" is safe: it sets no header
	if len(key) > 256 {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] >= 0x7f {
			return false
		}
	}
	return true
}

// hashesConversation reports whether an upstream handler is a
// reverse_proxy whose lb_policy is header ConversationHeader.
func hashesConversation(upstream any) bool {
	rp, ok := upstream.(*reverseproxy.Handler)
	if !ok || rp.LoadBalancing == nil {
		return false
	}
	hs, ok := rp.LoadBalancing.SelectionPolicy.(*reverseproxy.HeaderHashSelection)
	return ok && http.CanonicalHeaderKey(hs.Field) == ConversationHeader
}
