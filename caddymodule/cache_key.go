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
	out, err := sjson.SetBytes(body, member, key)
	if err != nil {
		return body
	}
	return out
}
