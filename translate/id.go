package translate

import (
	"crypto/rand"
	"encoding/hex"
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

// NewCallID returns a fresh tool call id in OpenAI's shape: "call_" and 24
// hex digits. Package stream uses it for calls parsed out of model text.
func NewCallID() string { return newID("call_") }
