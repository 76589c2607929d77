package translate

import "strings"

// A backend that searched cites the pages in its text, each protocol in
// its own words, bridged so:
//
//	Anthropic   a text block's citations: web_search_result_location
//	            {url,title,cited_text,encrypted_index}; the block is the
//	            cited span (the text is split at citations). Streamed as a
//	            citations_delta, before the block's text.
//	Responses   an output_text's annotations: url_citation
//	            {url,title,start_index,end_index} into the item's text, in
//	            characters (code points), not bytes.
//	            Streamed as response.output_text.annotation.added, after it.
//	Gemini      groundingMetadata.groundingSupports: {segment{startIndex,
//	            endIndex,text},groundingChunkIndices} into the answer's
//	            text, pointing at groundingChunks; at the end of the answer.
//
// The IR holds them on the text part they cite from (Part.Citations), in a
// stream as text deltas carrying a Citation (event.go). A citation's span
// is Start..End, byte offsets into its part's text, End 0 for the whole
// part (Anthropic's); one that gives only the cited text is found in the
// part's text (span). An encoder writes them where its protocol has them;
// OpenAI Chat and Interactions clients get none, and a citation in a
// client's history is left out as before (its encrypted index is
// Anthropic's, and the text it cites is there anyway).

// Citation is a page a text part cites.
type Citation struct {
	URL, Title string
	// CitedText is the text cited, when the backend said it.
	CitedText string
	// Start and End are the cited span's byte offsets in the text part;
	// End 0 means the whole part.
	Start, End int
	// EncryptedIndex is Anthropic's encrypted_index, empty from any other
	// backend.
	EncryptedIndex string
}

// span returns the cited span of text, a part's text: Start..End, or where
// the cited text is in text, or else the whole text.
func (c *Citation) span(text string) (start, end int) {
	if c.End > 0 && c.End <= len(text) && c.Start >= 0 && c.Start <= c.End {
		return c.Start, c.End
	}
	if c.CitedText != "" {
		if i := strings.Index(text, c.CitedText); i >= 0 {
			return i, i + len(c.CitedText)
		}
	}
	return 0, len(text)
}

// citedText is the text c cites in text, a part's text.
func (c *Citation) citedText(text string) string {
	if c.CitedText != "" {
		return c.CitedText
	}
	s, e := c.span(text)
	return text[s:e]
}

// Cite emits a citation of the open text block, opening an empty one if
// none is open (Anthropic's citations come before the text they are on).
func (e *Emitter) Cite(dst []Event, c *Citation) []Event {
	if e.done || c == nil || c.URL == "" {
		return dst
	}
	if e.open != BlockText {
		dst = e.openBlock(dst, BlockText, "", "", "")
	}
	return append(dst, Event{Type: EventBlockDelta, Index: e.openIndex, Block: BlockText, Citation: c})
}
