package tokencount

import (
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Encoding names a BPE vocabulary Count can use.
type Encoding string

// The vocabularies embedded in the binary.
const (
	O200kBase  Encoding = "o200k_base"  // GPT-4o, GPT-4.1, GPT-5, o-series
	Cl100kBase Encoding = "cl100k_base" // GPT-4, GPT-3.5
)

// bpe is one lazily built tokenizer. Building o200k_base's 200,000-entry
// table takes tens of milliseconds and tens of megabytes, so it happens on
// the first count, not at start-up: a configuration that never counts never
// pays for it.
type bpe struct {
	enc   tokenizer.Encoding
	once  sync.Once
	codec tokenizer.Codec
}

var (
	o200k  = &bpe{enc: tokenizer.O200kBase}
	cl100k = &bpe{enc: tokenizer.Cl100kBase}
)

func (b *bpe) get() tokenizer.Codec {
	b.once.Do(func() {
		c, err := tokenizer.Get(b.enc)
		if err != nil {
			panic("tokencount: " + err.Error()) // both encodings are compiled in
		}
		b.codec = c
	})
	return b.codec
}

// tokenize runs the tokenizer on one piece of text; a test wraps it to see
// what the tokenizer is handed.
var tokenize = func(c tokenizer.Codec, s string) (int, error) { return c.Count(s) }

// maxPiece bounds the text handed to the tokenizer at once. Its regular
// expression engine copies its whole input into runes (four bytes for each
// byte of ASCII), so a 32 MB text would cost 128 MB more; pieces of 64 KB
// cost 256 KB, and counting them one after another takes no longer.
const maxPiece = 64 << 10

// count returns the tokens of s, counted in pieces of at most maxPiece
// bytes. The tokenizer fails only on a regular expression time-out, which
// it does not set; the estimate stands in then.
func (b *bpe) count(s string) int {
	n := 0
	for s != "" {
		cut := pieceEnd(s)
		k, err := tokenize(b.get(), s[:cut])
		if err != nil {
			k = EstimateText(s[:cut])
		}
		n += k
		s = s[cut:]
	}
	return n
}

// pieceEnd returns where the first piece of s ends: all of s when it is
// short enough, else before a space that follows a printable ASCII
// character (a letter, a digit, punctuation). No piece of o200k_base's or
// cl100k_base's split pattern runs from such a character into a space (a
// word may begin with a space, never end with one; runs of white space
// begin there), so the pieces count exactly what the whole text would. A
// text with no such place in the last half of its window (a base64 blob)
// is cut at a character boundary, which may miscount a token.
func pieceEnd(s string) int {
	if len(s) <= maxPiece {
		return len(s)
	}
	for i := maxPiece; i > maxPiece/2; i-- {
		if s[i] == ' ' && s[i-1] > ' ' && s[i-1] < 0x7f {
			return i
		}
	}
	i := maxPiece
	for s[i]&0xc0 == 0x80 { // not inside a UTF-8 sequence
		i--
	}
	return i
}

// CountText returns the tokens of s in the given encoding.
func CountText(s string, enc Encoding) int {
	return bpeOf(enc).count(s)
}

// bpeOf returns the tokenizer of enc: o200k_base unless enc is cl100k_base.
func bpeOf(enc Encoding) *bpe {
	if enc == Cl100kBase {
		return cl100k
	}
	return o200k
}

// encodingFor picks the tokenizer for model on a backend of framing f
// (Framing.Encoding; o200k_base when f has no rule).
func encodingFor(f *Framing, model string) *bpe {
	if f.Encoding == nil {
		return o200k
	}
	return bpeOf(f.Encoding(model))
}
