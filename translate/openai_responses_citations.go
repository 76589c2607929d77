package translate

import (
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// The Responses API's citations are url_citation annotations of an
// output_text, {url,title,start_index,end_index}: the span's offsets into
// the item's text in characters (code points, as OpenAI's Python server
// counts them), which the IR holds as byte offsets (citations.go). The two
// agree on ASCII text; respByteOffset and respCharOffset convert.

// respCitation reads a url_citation annotation; ok is false for other
// annotation types (file citations, …). text, when known, is the text the
// span is cut from.
func respCitation(a gjson.Result, text string) (c Citation, ok bool) {
	if a.Get("type").Str != "url_citation" {
		return c, false
	}
	start, end := int(a.Get("start_index").Int()), int(a.Get("end_index").Int())
	c = Citation{URL: a.Get("url").Str, Title: a.Get("title").Str}
	if text == "" {
		// No text to convert against (a stream's annotation before its
		// item's text is known): the offsets as given.
		c.Start, c.End = start, end
		return c, true
	}
	c.Start, c.End = respByteOffset(text, start), respByteOffset(text, end)
	if c.Start >= 0 && c.Start < c.End && c.End <= len(text) {
		c.CitedText = text[c.Start:c.End]
	}
	return c, true
}

// respByteOffset returns the byte offset in text of character offset n;
// an offset past the text's end stays past it (the span is then not
// used), a negative one stays negative.
func respByteOffset(text string, n int) int {
	if n <= 0 {
		return n
	}
	chars := 0
	for i := range text {
		if chars == n {
			return i
		}
		chars++
	}
	return len(text) + (n - chars)
}

// respCharOffset returns the character offset of byte offset b in text.
func respCharOffset(text string, b int) int {
	if b <= 0 {
		return b
	}
	if b > len(text) {
		return utf8.RuneCountInString(text) + b - len(text)
	}
	return utf8.RuneCountInString(text[:b])
}

// respCitations reads the url_citation annotations of an output_text of
// text.
func respCitations(annotations gjson.Result, text string) []Citation {
	var out []Citation
	annotations.ForEach(func(_, a gjson.Result) bool {
		if c, ok := respCitation(a, text); ok {
			out = append(out, c)
		}
		return true
	})
	return out
}

// respAppendAnnotations appends the annotations array of an output_text
// made of parts: each part's citations, their spans moved to where the
// part's text starts in the joined text.
func respAppendAnnotations(b []byte, parts []Part) []byte {
	b = append(b, '[')
	n, offset := 0, 0 // offset: characters before the part in the joined text
	for i := range parts {
		p := &parts[i]
		if p.Type != PartText {
			continue
		}
		for j := range p.Citations {
			if n > 0 {
				b = append(b, ',')
			}
			n++
			s, e := p.Citations[j].span(p.Text)
			b = respAppendURLCitation(b, &p.Citations[j], offset+respCharOffset(p.Text, s), offset+respCharOffset(p.Text, e))
		}
		offset += utf8.RuneCountInString(p.Text)
	}
	return append(b, ']')
}

// respAppendURLCitation appends c as a url_citation of start..end.
func respAppendURLCitation(b []byte, c *Citation, start, end int) []byte {
	b = append(b, `{"type":"url_citation","url":`...)
	b = appendJSONString(b, c.URL)
	b = append(b, `,"title":`...)
	b = appendJSONString(b, c.Title)
	b = append(b, `,"start_index":`...)
	b = appendJSONInt(b, int64(start))
	b = append(b, `,"end_index":`...)
	b = appendJSONInt(b, int64(end))
	return append(b, '}')
}

// annotation keeps a response.output_text.annotation.added event's
// annotation for the end of its item, where the item's text gives the
// citation its cited text (doneCitations).
func (d *respStreamDecoder) annotation(dst []Event, ev gjson.Result) []Event {
	if d.itemType == "message" && len(d.annotations) < respMaxAnnotations {
		d.annotations = append(d.annotations, ev.Get("annotation").Raw)
	}
	return dst
}

// respMaxAnnotations bounds the annotations a stream decoder keeps for one
// item.
const respMaxAnnotations = 256

// doneCitations forwards the citations of a message item at its end: the
// item's own annotations, or else those its stream announced.
func (d *respStreamDecoder) doneCitations(dst []Event, it gjson.Result) []Event {
	pending := d.annotations
	d.annotations = d.annotations[:0]
	it.Get("content").ForEach(func(_, c gjson.Result) bool {
		if c.Get("type").Str != "output_text" {
			return true
		}
		text, anns := c.Get("text").Str, c.Get("annotations")
		if !anns.IsArray() || len(anns.Array()) == 0 {
			for _, a := range pending {
				if cite, ok := respCitation(gjson.Parse(a), text); ok {
					dst = d.em.Cite(dst, &cite)
				}
			}
			pending = nil
			return true
		}
		for _, cite := range respCitations(anns, text) {
			dst = d.em.Cite(dst, &cite)
		}
		return true
	})
	return dst
}

// citationEvents writes, at the end of the open text item, an
// annotation.added event for each citation of its text (they come before
// the text's .done events, as OpenAI sends them), and returns the
// citations, which the item's annotations list.
func (s *respStreamEncoder) citationEvents(w FrameWriter, text string) []Citation {
	cites := s.cites
	s.cites = nil
	for i := range cites {
		st, e := cites[i].span(text)
		st, e = respCharOffset(text, st), respCharOffset(text, e)
		b := s.itemEvent("response.output_text.annotation.added")
		b = append(b, `,"content_index":0,"annotation_index":`...)
		b = appendJSONInt(b, int64(i))
		b = append(b, `,"annotation":`...)
		b = respAppendURLCitation(b, &cites[i], st, e)
		s.write(w, "response.output_text.annotation.added", append(b, '}'))
	}
	return cites
}
