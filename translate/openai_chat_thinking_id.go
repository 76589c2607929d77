package translate

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"io"
	"strings"
)

// Chat Completions has no place for a thinking block's signature, and the
// OpenAI SDKs keep only content, tool-call ids, names and arguments when
// they send an assistant message back (openai-go's ToParam), dropping even
// reasoning_content. Anthropic refuses a tool-use turn whose thinking lost
// its signature, and a Responses backend needs its encrypted reasoning
// back. So the signed thinking and redacted thinking blocks that precede a
// tool call travel in that call's id: "<id>-th-<blob>", the blob being the
// blocks, in order, deflated and in unpadded base64url. Every byte is in
// [A-Za-z0-9_-], which clients keep (one that truncates ids loses the
// blocks, and the id still matches its result). The request decoder takes
// them out of the id again and puts them first in the assistant message, as
// Anthropic requires; the id the backend sees is the original one. The
// thinking text compresses, the signature does not: 500 bytes of text and a
// 1200-byte signature make an id of about 1.8 KB, 8000 bytes about 6.5 KB.
const oaiThinkSep = "-th-"

// Kinds of folded blocks.
const (
	oaiFoldKindThinking = 't'
	oaiFoldKindRedacted = 'r'
)

// oaiFoldable reports whether p is a block folded into a tool-call id:
// thinking with a signature, or redacted thinking.
func oaiFoldable(p *Part) bool {
	return p.Type == PartThinking && p.Signature != "" || p.Type == PartRedactedThinking && p.Signature != ""
}

// oaiFoldThinking returns id with the blocks folded in; without blocks, id.
func oaiFoldThinking(id string, blocks []Part) string {
	if len(blocks) == 0 {
		return id
	}
	var raw []byte
	for i := range blocks {
		p := &blocks[i]
		kind := byte(oaiFoldKindThinking)
		if p.Type == PartRedactedThinking {
			kind = oaiFoldKindRedacted
		}
		raw = append(raw, kind)
		raw = binary.AppendUvarint(raw, uint64(len(p.Text)))
		raw = append(raw, p.Text...)
		raw = binary.AppendUvarint(raw, uint64(len(p.Signature)))
		raw = append(raw, p.Signature...)
	}
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.BestCompression) // the level is valid
	_, _ = w.Write(raw)                                // writes to a bytes.Buffer do not fail
	_ = w.Close()
	b := make([]byte, 0, len(id)+len(oaiThinkSep)+base64.RawURLEncoding.EncodedLen(z.Len()))
	b = append(b, id...)
	b = append(b, oaiThinkSep...)
	b = base64.RawURLEncoding.AppendEncode(b, z.Bytes())
	return string(b)
}

// oaiUnfoldThinking undoes oaiFoldThinking: the id as the backend knows it
// and the folded blocks (nil when id carries none). An id's own "-th-"
// (another fold's base64url may contain it) is told apart by decoding: the
// first occurrence after which the rest decodes whole is the separator.
func oaiUnfoldThinking(id string) (string, []Part) {
	for from := 0; ; {
		i := strings.Index(id[from:], oaiThinkSep)
		if i < 0 {
			return id, nil
		}
		at := from + i
		if blocks, ok := oaiDecodeFolded(id[at+len(oaiThinkSep):]); ok {
			return id[:at], blocks
		}
		from = at + 1
	}
}

// oaiFoldLimit bounds what an inflated fold may hold, against a crafted id.
const oaiFoldLimit = 16 << 20

func oaiDecodeFolded(enc string) ([]Part, bool) {
	z, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(z) == 0 {
		return nil, false
	}
	raw, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(z)), oaiFoldLimit+1))
	if err != nil || len(raw) > oaiFoldLimit || len(raw) == 0 {
		return nil, false
	}
	var blocks []Part
	for len(raw) > 0 {
		kind := raw[0]
		raw = raw[1:]
		var text, sig string
		var ok bool
		if text, raw, ok = oaiFoldString(raw); !ok {
			return nil, false
		}
		if sig, raw, ok = oaiFoldString(raw); !ok || sig == "" {
			return nil, false
		}
		switch kind {
		case oaiFoldKindThinking:
			blocks = append(blocks, Part{Type: PartThinking, Text: text, Signature: sig})
		case oaiFoldKindRedacted:
			blocks = append(blocks, Part{Type: PartRedactedThinking, Signature: sig})
		default:
			return nil, false
		}
	}
	return blocks, true
}

// oaiFoldString reads a uvarint length and that many bytes.
func oaiFoldString(b []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return "", nil, false
	}
	b = b[k:]
	return string(b[:n]), b[n:], true
}

// oaiCallIDs returns the ids to give parts' tool calls for an OpenAI Chat
// client: each call's id with the foldable blocks since the previous call
// folded in. It is nil when no call gets any.
func oaiCallIDs(parts []Part) map[int]string {
	var ids map[int]string
	var pending []Part
	for i := range parts {
		p := &parts[i]
		switch {
		case oaiFoldable(p):
			pending = append(pending, *p)
		case p.Type == PartToolCall && p.ToolCall != nil && len(pending) > 0:
			if ids == nil {
				ids = map[int]string{}
			}
			ids[i] = oaiFoldThinking(p.ToolCall.ID, pending)
			pending = pending[:0]
		}
	}
	return ids
}

// oaiRestoreThinking puts the blocks folded into msg's tool-call ids back:
// first in the message, in order, replacing the unsigned reasoning a client
// may also have sent (reasoning_content), which is the same thought.
func oaiRestoreThinking(msg *Message, folded []Part) {
	if len(folded) == 0 {
		return
	}
	parts := make([]Part, 0, len(folded)+len(msg.Parts))
	parts = append(parts, folded...)
	for _, p := range msg.Parts {
		if p.Type == PartThinking && p.Signature == "" {
			continue
		}
		parts = append(parts, p)
	}
	msg.Parts = parts
}
