package tokencount

import (
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"

	"github.com/louter/louter/translate"
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

// count returns the tokens of s. The tokenizer fails only on a regular
// expression time-out, which it does not set; the estimate stands in then.
func (b *bpe) count(s string) int {
	if s == "" {
		return 0
	}
	n, err := b.get().Count(s)
	if err != nil {
		return EstimateText(s)
	}
	return n
}

// CountText returns the tokens of s in the given encoding.
func CountText(s string, enc Encoding) int {
	if enc == Cl100kBase {
		return cl100k.count(s)
	}
	return o200k.count(s)
}

// encodingFor picks the vocabulary for a backend: cl100k_base for OpenAI's
// GPT-4 and GPT-3.5 models, o200k_base for everything else — exact for
// OpenAI's current models, and the closest public vocabulary to Claude's and
// Gemini's.
func encodingFor(backend translate.Protocol, model string) *bpe {
	if isOpenAIFamily(backend) {
		m := strings.ToLower(model)
		if hasAnyPrefix(m, "gpt-4o", "gpt-4.1", "gpt-4.5", "chatgpt-4o") {
			return o200k
		}
		if hasAnyPrefix(m, "gpt-4", "gpt-3.5", "gpt-35", "ft:gpt-4", "ft:gpt-3.5") {
			return cl100k
		}
	}
	return o200k
}
