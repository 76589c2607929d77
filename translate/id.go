package translate

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"strings"
	"unicode/utf8"
)

// newID returns prefix followed by 24 random hex digits, the shape of the
// providers' own ids (msg_…, toolu_…, call_…, chatcmpl-…, resp_…), for
// objects that arrive without one.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	dst := make([]byte, len(prefix), len(prefix)+24)
	copy(dst, prefix)
	return string(hex.AppendEncode(dst, b[:]))
}

// ownID returns id when it has the client protocol's shape (prefix), and
// otherwise one of that shape: an Anthropic client answered by an OpenAI
// backend gets msg_…, not chatcmpl-…, as SDKs and usage tools that
// de-duplicate on the id expect the provider's own form. The stand-in is
// prefix and 24 hex digits of SHA-256 of the backend's id, so the same
// answer keeps the same id (a stream's events, a replay, a log line
// matched against the backend's), and a fresh one when there is none.
func ownID(id, prefix string) string {
	if strings.HasPrefix(id, prefix) && len(id) > len(prefix) {
		return id
	}
	if id == "" {
		return newID(prefix)
	}
	sum := sha256.Sum256([]byte(id))
	dst := make([]byte, len(prefix), len(prefix)+24)
	copy(dst, prefix)
	return string(hex.AppendEncode(dst, sum[:12]))
}

// NewCallID returns a fresh tool call id in OpenAI's shape: "call_" and 24
// hex digits. Package stream uses it for calls parsed out of model text.
func NewCallID() string { return newID("call_") }

// boundToolID returns id when it has at most limit bytes, and otherwise
// toolIDStandIn's stand-in for it. Backends limit ids (OpenAI Chat to 40
// bytes, Responses to 64) that clients do not: a signature folded into an
// id (geminiJoinCallID, oaiFoldThinking) runs to hundreds of bytes. An id
// that is not valid UTF-8 gets a stand-in too, however short: each invalid
// byte is written as U+FFFD, three bytes, so 14 of them would reach the
// backend as 42.
func boundToolID(id string, limit int) string {
	if len(id) <= limit && utf8.ValidString(id) {
		return id
	}
	return toolIDStandIn(id, limit)
}

// toolIDStandIn returns a stand-in for id of at most limit bytes (limit >=
// 17), all of them in [a-zA-Z0-9_-]: the start of id, with other bytes made
// '_', then "_" and 16 hex digits of FNV-1a (64 bits) of the whole id. It
// depends on id alone, so a call and its result, written apart, still pair,
// and the same history gives the same ids turn after turn (prompt caches
// keep hitting).
func toolIDStandIn(id string, limit int) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id)) // a hash.Hash never fails
	b := make([]byte, 0, limit)
	b = append(b, sanitizeToolToken(id, limit-17)...)
	b = append(b, '_')
	return string(hex.AppendEncode(b, h.Sum(nil)))
}
