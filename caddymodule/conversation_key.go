package caddymodule

import (
	"encoding/hex"
	"hash/fnv"
	"net/http"
	"strings"
	"unsafe"

	"github.com/caddyserver/caddy/v2"
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
// The same key is in the {http.louter.conversation} placeholder. The
// header is removed again below reverse_proxy, so backends never see it.
const ConversationHeader = "X-Louter-Conversation"

// conversationPlaceholder is the placeholder holding the conversation key.
const conversationPlaceholder = "http.louter.conversation"

// conversationKey derives the conversation key from what each agent sends:
//
//   - Claude Code: the session of metadata.user_id, a JSON string
//     {"device_id":…,"session_id":…} in recent versions,
//     user_…_account_…_session_<uuid> in older ones;
//   - Codex: prompt_cache_key (its conversation id), else its session_id
//     or conversation_id header; OpenAI Chat clients' prompt_cache_key;
//   - otherwise (Gemini CLI sends no session id to an API-key endpoint):
//     a hash of the system prompt and the first message, which do not
//     change as a conversation grows.
//
// Keys are prefixed by their source ("session:", "cache:", "hash:") so two
// sources never collide. It returns "" for a body it cannot read.
func conversationKey(p translate.Protocol, h http.Header, body []byte) string {
	if len(body) == 0 {
		return ""
	}
	s := unsafe.String(&body[0], len(body)) // read only; kept parts are copied
	switch p {
	case translate.ProtocolAnthropic:
		if id := claudeCodeSession(gjson.Get(s, "metadata.user_id").Str); id != "" {
			return "session:" + id
		}
	case translate.ProtocolOpenAIResponses, translate.ProtocolOpenAIChat:
		if k := gjson.Get(s, "prompt_cache_key").Str; k != "" {
			return "cache:" + strings.Clone(k)
		}
		for _, name := range [...]string{"Session_id", "Conversation_id", "Session-Id"} {
			if v := h.Get(name); v != "" {
				return "session:" + v
			}
		}
	}
	return firstTurnHash(p, s)
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

// firstTurnPaths are, per protocol, the members holding the system prompt
// and the conversation's messages.
var firstTurnPaths = map[translate.Protocol][2]string{
	translate.ProtocolAnthropic:       {"system", "messages"},
	translate.ProtocolOpenAIChat:      {"", "messages"},
	translate.ProtocolOpenAIResponses: {"instructions", "input"},
	translate.ProtocolGemini:          {"systemInstruction", "contents"},
}

// firstTurnHash hashes the text of the system prompt and of the first
// message of the conversation (the first two for OpenAI Chat and
// Responses, whose system prompt is a message). Only text is hashed, not
// raw JSON: Claude Code moves cache_control breakpoints from turn to turn,
// which changes the bytes but not the conversation.
func firstTurnHash(p translate.Protocol, s string) string {
	paths, ok := firstTurnPaths[p]
	if !ok {
		return ""
	}
	h := fnv.New64a()
	n := 0
	if paths[0] != "" {
		n += hashText(h, gjson.Get(s, paths[0]))
	}
	if p == translate.ProtocolGemini && n == 0 {
		n += hashText(h, gjson.Get(s, "system_instruction"))
	}
	msgs := gjson.Get(s, paths[1])
	if msgs.Type == gjson.String { // Responses: input may be one string
		n += hashText(h, msgs)
	} else {
		first := 1
		if p == translate.ProtocolOpenAIChat || p == translate.ProtocolOpenAIResponses {
			first = 2 // the system (developer) message, then the user's
		}
		i := 0
		msgs.ForEach(func(_, m gjson.Result) bool {
			n += hashText(h, m)
			i++
			return i < first
		})
	}
	if n == 0 {
		return ""
	}
	var sum [8]byte
	return "hash:" + hex.EncodeToString(h.Sum(sum[:0]))
}

// textWriter is the part of a hash hashText writes to.
type textWriter interface{ Write([]byte) (int, error) }

// hashText writes every "text" string under v (v itself when it is a
// string) to h, with a separator, and returns how many it wrote. It
// descends into arrays and objects, so it reads every protocol's message
// shapes (content strings, content blocks, Gemini parts) alike; it skips
// "cache_control" and other non-text members.
func hashText(h textWriter, v gjson.Result) int {
	n := 0
	var walk func(v gjson.Result, depth int)
	walk = func(v gjson.Result, depth int) {
		if depth > 8 {
			return // messages are shallow; bound the walk
		}
		switch {
		case v.Type == gjson.String:
			_, _ = h.Write([]byte(v.Str))
			_, _ = h.Write([]byte{0})
			n++
		case v.IsArray():
			v.ForEach(func(_, e gjson.Result) bool { walk(e, depth+1); return true })
		case v.IsObject():
			v.ForEach(func(k, e gjson.Result) bool {
				switch k.Str {
				case "text", "content", "parts":
					walk(e, depth+1)
				}
				return true
			})
		}
	}
	walk(v, 0)
	return n
}

// setConversation sets the conversation key on the request reverse_proxy
// gets, as ConversationHeader and as the {http.louter.conversation}
// placeholder. It runs after the header allowlist, which would remove the
// header; a client's own X-Louter-Conversation is replaced (or removed
// when there is no key: lb_policy header then uses its fallback), so a client cannot pick another conversation's
// upstream by sending one.
func setConversation(r *http.Request, key string) {
	if !headerSafe(key) {
		key = ""
	}
	if key == "" {
		r.Header.Del(ConversationHeader)
	} else {
		r.Header.Set(ConversationHeader, key)
	}
	// Set even when empty, so the placeholder reads "" rather than staying
	// unreplaced.
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		repl.Set(conversationPlaceholder, key)
	}
}

// headerSafe reports whether key can be a header value as it is: printable
// ASCII, and not so long that it bloats the request.
func headerSafe(key string) bool {
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
