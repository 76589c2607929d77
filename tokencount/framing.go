package tokencount

import "strings"

// Framing is how a backend's API counts a request beyond the tokens of its
// text: what it adds around the text, in tokens, what an image and a PDF
// page cost, and which vocabulary its models' text is counted in. OpenAI,
// Anthropic and Gemini are the providers'; a caller may describe another
// API with a Framing of its own.
//
// A field left zero adds nothing (with a nil Image, images cost nothing);
// a nil Encoding is o200k_base. A nil *Framing, wherever one is
// taken, is OpenAI: the API that OpenAI-compatible servers implement, and
// what a backend with no framing of its own (a protocol that exists only in
// tests) is counted as.
type Framing struct {
	Request     int // once per request
	Message     int // per message, and for the system prompt
	Tool        int // per tool definition
	ToolsPrompt int // once when the request offers tools
	ToolCall    int // per tool call, beyond its name and arguments
	ToolResult  int // per tool result, beyond its content

	// Image returns what an image of w×h pixels (both above 0) costs;
	// detail is the image detail the request asked for ("low", "high",
	// "auto", or ""). The size is read from the image's first bytes
	// (ImageSize); an image by URL or file id, or one whose size cannot
	// be read, is taken as 1024×1024.
	Image func(w, h int, detail string) int
	// PDFPage is what a page of a PDF document costs; the pages are the
	// PDF's page objects (PDFPages). A text document costs its text.
	PDFPage int
	// Encoding returns the vocabulary Count reads model's text in; nil:
	// o200k_base.
	Encoding func(model string) Encoding
}

// The values follow the providers' published descriptions where there are
// any, and are otherwise small constants for the role markers.
var (
	// OpenAI is OpenAI's Chat Completions and Responses APIs: 3 tokens a
	// message and 3 to prime the reply (OpenAI's cookbook, "How to count
	// tokens with tiktoken"); an image costs 85 tokens plus 170 per
	// 512-px tile, after fitting it in 2048×2048 and its short side in
	// 768 px, and 85 in all for detail "low" (OpenAI's vision guide); a
	// PDF page, sent as a page image and its text, is taken as 1,000.
	// Text is counted in cl100k_base for the GPT-4 and GPT-3.5 models,
	// o200k_base for the others (GPT-4o, GPT-4.1, GPT-5, the o-series):
	// exact for OpenAI's text.
	OpenAI = &Framing{
		Request: 3, Message: 3, Tool: 8, ToolsPrompt: 12, ToolCall: 4, ToolResult: 4,
		Image: openAIImage, PDFPage: 1000, Encoding: openAIEncoding,
	}

	// Anthropic is Anthropic's Messages API: a 346-token system prompt
	// whenever tools are offered (Anthropic's tool use pricing); an image
	// costs width·height/750 after scaling its long edge to at most
	// 1568 px, and at most about 1,600 (Anthropic's vision guide); a PDF
	// page costs its text plus a page image, about 1,500–3,000 tokens by
	// Anthropic's PDF support guide, taken as 2,250. Claude's tokenizer is
	// not public: its text is counted in o200k_base, the closest public
	// vocabulary.
	Anthropic = &Framing{
		Request: 4, Message: 4, Tool: 8, ToolsPrompt: 346, ToolCall: 6, ToolResult: 6,
		Image: anthropicImage, PDFPage: 2250,
	}

	// Gemini is Google's Gemini API: an image costs 258 tokens when it is
	// at most 384 px on both sides, else 258 per 768×768 tile, and a PDF
	// page 258, as an image (Gemini's token counting guide). Gemini's
	// tokenizer is not public: its text is counted in o200k_base.
	Gemini = &Framing{
		Request: 1, Message: 3, Tool: 6, ToolsPrompt: 8, ToolCall: 4, ToolResult: 4,
		Image: geminiImage, PDFPage: 258,
	}
)

// orDefault returns f, or OpenAI when f is nil.
func (f *Framing) orDefault() *Framing {
	if f == nil {
		return OpenAI
	}
	return f
}

func openAIImage(w, h int, detail string) int {
	if detail == "low" {
		return 85
	}
	fw, fh := float64(w), float64(h)
	if s := 2048 / max(fw, fh); s < 1 {
		fw, fh = fw*s, fh*s
	}
	if s := 768 / min(fw, fh); s < 1 {
		fw, fh = fw*s, fh*s
	}
	tiles := ceilDiv(int(fw+0.5), 512) * ceilDiv(int(fh+0.5), 512)
	return 85 + 170*tiles
}

func anthropicImage(w, h int, _ string) int {
	fw, fh := float64(w), float64(h)
	if s := 1568 / max(fw, fh); s < 1 {
		fw, fh = fw*s, fh*s
	}
	return int(min(fw*fh/750, 1600) + 0.5)
}

func geminiImage(w, h int, _ string) int {
	if w <= 384 && h <= 384 {
		return 258
	}
	return 258 * ceilDiv(w, 768) * ceilDiv(h, 768)
}

// openAIEncoding picks cl100k_base for OpenAI's GPT-4 and GPT-3.5 models,
// o200k_base for the others.
func openAIEncoding(model string) Encoding {
	m := strings.ToLower(model)
	if hasAnyPrefix(m, "gpt-4o", "gpt-4.1", "gpt-4.5", "chatgpt-4o") {
		return O200kBase
	}
	if hasAnyPrefix(m, "gpt-4", "gpt-3.5", "gpt-35", "ft:gpt-4", "ft:gpt-3.5") {
		return Cl100kBase
	}
	return O200kBase
}

// hasAnyPrefix reports whether s starts with one of prefixes.
func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
