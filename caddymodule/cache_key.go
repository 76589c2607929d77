package caddymodule

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"github.com/tidwall/sjson"
)

// A backend whose API takes a prompt-cache routing key (OpenAI's
// prompt_cache_key, on Chat Completions and the Responses API) keeps a
// conversation's prefix cache warm only when every turn carries the same
// key. Agents that speak another protocol send none, or send it where the
// backend cannot see it (Claude Code's session is in metadata.user_id,
// opencode's in X-Session-Id). So a request translated for such a backend
// gets one, derived from the conversation key (conversation_key.go: the
// agent's session id, else the hash of the first turn) and scoped by the
// authenticated client, since a session id is the client's own word: two
// clients never share a key, and the key reveals neither the session nor
// the client. A request passed through in the backend's own protocol is
// left as the client wrote it.

// withCacheKey returns the translated body for a backend whose row names
// a cache key member, with the member set to the conversation's key.
func withCacheKey(body []byte, member string, r *http.Request, c *conversation) []byte {
	if member == "" || c == nil {
		return body
	}
	k := c.key()
	if k == "" {
		return body
	}
	h := sha256.New()
	if ce := clientOf(r); ce != nil {
		h.Write([]byte(ce.name))
	}
	h.Write([]byte{0})
	h.Write([]byte(k))
	key := "louter-" + hex.EncodeToString(h.Sum(nil)[:16])
	if out, ok := appendKeyMember(body, member, key); ok {
		return out
	}
	out, err := sjson.SetBytes(body, member, key)
	if err != nil {
		return body
	}
	return out
}

// appendKeyMember appends the member with the string value key to body, a
// translated request: the last member of a JSON object that its encoder
// wrote compact, ending with its closing brace. No encoder writes a cache
// key member (the IR has no field for one), so this is what sjson's
// SetBytes writes for it, byte for byte, without reading the ~100 KB body
// to look for the member first; and the encoders leave room at the end of
// their buffer, so the body is not copied either. key and member need no
// escaping (a hex key, a row's member name). ok is false, and body is
// untouched, when body does not end with a closing brace.
func appendKeyMember(body []byte, member, key string) (out []byte, ok bool) {
	n := len(body)
	if n < 2 || body[n-1] != '}' {
		return body, false
	}
	out = body[:n-1]
	if body[n-2] != '{' {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, member...)
	out = append(out, `":"`...)
	out = append(out, key...)
	return append(out, `"}`...), true
}
