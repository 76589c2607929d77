// Package tokencount counts the input tokens of a chat request locally, for
// the token counting endpoints and for the input figure a stream announces
// before the backend has reported one.
//
// Two counters walk the same parts of a translate.Request — what the backend
// will actually be sent: the system prompt, every message's text, the tool
// definitions (name, description, JSON schema), tool calls and results, the
// reasoning of the turn in progress, and images and documents by each
// provider's published formula — and differ only in how they turn text into
// tokens:
//
//   - Count runs a real byte-pair-encoding tokenizer (OpenAI's o200k_base, or
//     cl100k_base for the GPT-4/3.5 generation), embedded in the binary, so
//     nothing is fetched at run time. It is exact for OpenAI's text and an
//     approximation for Claude and Gemini, whose tokenizers are not public.
//   - Estimate classifies bytes (letters, digits, punctuation, spaces,
//     other scripts) and applies factors calibrated against Count. It reads
//     each byte once and allocates nothing, so it may run on a chat request.
//
// What differs between backends besides the text — the tokens an API adds
// around messages and tools, what an image or a PDF page costs, which
// vocabulary its models use — is a Framing. OpenAI, Anthropic and Gemini
// describe the three providers' APIs; the caller says which one a request
// goes to (louter's protocol rows hold each backend protocol's), and may
// describe another. A nil *Framing is OpenAI's.
//
// The package does not import Caddy.
package tokencount

import (
	"unsafe"

	"github.com/louter/louter/translate"
)

// Count returns the input tokens of req as a backend of framing f would
// count them, with a BPE tokenizer chosen by model (f.Encoding).
func Count(req *translate.Request, f *Framing, model string) int {
	f = f.orDefault()
	return walk(req, f, counter{text: encodingFor(f, model).count, exact: true})
}

// Estimate returns the input tokens of req without running a tokenizer (see
// the package documentation). It is meant for the hot path: one pass over the
// text, no allocation.
func Estimate(req *translate.Request, f *Framing) int {
	return walk(req, f.orDefault(), counter{text: EstimateText})
}

// Quick is Estimate reading a sample of each long text — sampleWindows
// windows of sampleWindow bytes, spread evenly from its start to its end —
// and scaling by the text's length: a 100 KB request costs about ten
// kilobytes of scanning. It is what a stream's first event announces when
// the backend has not said, and what a route's tokens condition tests.
func Quick(req *translate.Request, f *Framing) int {
	return walk(req, f.orDefault(), counter{text: sampledEstimate})
}

// The sample of a long text. Many small windows spread over the text
// follow its changes of content (code, prose, other scripts, JSON) better
// than a few large ones; fewer bytes in all make the estimate noisier
// (TestEstimateAccuracy bounds it).
const (
	sampleWindow  = 32
	sampleWindows = 8
)

func sampledEstimate(s string) int {
	if len(s) <= sampleWindows*sampleWindow {
		return EstimateText(s)
	}
	var c counts
	read := 0
	step := (len(s) - sampleWindow) / (sampleWindows - 1)
	for i := range sampleWindows {
		a := cutRune(s, i*step)
		b := len(s) // the last window ends the text
		if i < sampleWindows-1 {
			b = cutRune(s, a+sampleWindow)
		}
		// A window starts in the middle of a word or a number: it is
		// read after the character before it, so that the piece is not
		// taken for a word of its own, which would overcount by about a
		// token a window.
		c.add(classBefore(s[:a]), s[a:b])
		read += b - a
	}
	return tokensOf(&c, float64(len(s))/float64(read))
}

// cutRune moves i back to the start of the UTF-8 character it falls in.
func cutRune(s string, i int) int {
	for i > 0 && i < len(s) && s[i]&0xc0 == 0x80 {
		i--
	}
	return i
}

// counter turns text into tokens; exact is false for the estimate, which
// must not decode documents.
type counter struct {
	text  func(string) int
	exact bool
}

// walk adds up what the backend sees of req, turning text into tokens with
// c and media into tokens with f's rules.
func walk(req *translate.Request, f *Framing, c counter) int {
	n := f.Request
	if len(req.System) > 0 {
		n += f.Message
		for i := range req.System {
			n += c.text(req.System[i].Text)
		}
	}
	if len(req.Tools) > 0 {
		n += f.ToolsPrompt
	}
	for i := range req.Tools {
		t := &req.Tools[i]
		n += f.Tool + c.text(t.Name) + c.text(t.Description) + c.text(bytesView(t.Schema))
	}
	// Reasoning of earlier turns is not sent again (Anthropic strips it,
	// OpenAI and Gemini drop it); the turn in progress — the assistant
	// messages after the last user message that is not only tool results
	// — keeps it.
	current := currentTurn(req.Messages)
	for i := range req.Messages {
		n += f.Message
		for j := range req.Messages[i].Parts {
			n += part(&req.Messages[i].Parts[j], f, i >= current, c)
		}
	}
	return n
}

func part(p *translate.Part, f *Framing, current bool, c counter) int {
	switch p.Type {
	case translate.PartText:
		return c.text(p.Text)
	case translate.PartThinking:
		if current {
			return c.text(p.Text)
		}
	case translate.PartImage:
		return imageTokens(p.Media, f)
	case translate.PartDocument:
		return documentTokens(p.Media, f, c)
	case translate.PartToolCall:
		if tc := p.ToolCall; tc != nil {
			return f.ToolCall + c.text(tc.Name) + c.text(tc.Arguments)
		}
	case translate.PartToolResult:
		if r := p.ToolResult; r != nil {
			n := f.ToolResult
			for k := range r.Content {
				n += part(&r.Content[k], f, current, c)
			}
			return n
		}
	}
	return 0
}

// currentTurn returns the index of the first message of the turn in
// progress: the one after the last user message that carries anything but
// tool results.
func currentTurn(msgs []translate.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != translate.RoleUser {
			continue
		}
		for _, p := range msgs[i].Parts {
			if p.Type != translate.PartToolResult {
				return i + 1
			}
		}
	}
	return 0
}

// bytesView returns b as a string without copying it. The counters only
// read their text during the call, and nothing changes a request's schema
// while it is counted.
func bytesView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
