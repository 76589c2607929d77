package translate

import (
	"fmt"
	"strings"
)

// oaiPartScan is what the walk of one content part found. image_url and
// file are walked in the same pass when they are objects.
type oaiPartScan struct {
	typ, text, cacheControl, refusal, imageURL, file jsonSpan
	image                                            [2]jsonSpan // url, detail
	fileFields                                       [3]jsonSpan // filename, file_data, file_id

	// The text and its form, read with the first text member when it is a
	// string (textAt).
	textStr  string
	textForm jsonForm
}

// content decodes message idx's content, the value at data[i]: a string,
// an array of parts, or null. It appends the parts to buf and returns buf
// and the index after the value. role says which part types are
// meaningful: text everywhere, refusal for the assistant, images and files
// for the user (images also for tools, which some clients send although
// OpenAI documents text only).
func (d *oaiRequestDecoder) content(i, idx int, role string, buf []Part) ([]Part, int) {
	switch d.kindAt(i) {
	case jsonNull:
	case jsonString:
		_, text, form, end := d.textAt(i)
		if text != "" {
			buf = append(buf, Part{Type: PartText, Text: text, textForm: form})
		}
		return buf, end
	case jsonArray:
		a := jsonOpenArray(d.data, i)
		for j := 0; d.nextElement(&a); j++ {
			var p oaiPartScan
			if a.i = d.partAt(a.i, &p); d.bad {
				break
			}
			buf = d.contentPart(&p, idx, j, role, buf)
		}
		return buf, a.i
	default:
		d.fail(oaiAt(idx, oaiStageContent), oaiBadRequest(fmt.Sprintf("messages[%d].content", idx),
			"messages[%d].content: must be a string or an array of content parts", idx))
	}
	_, end := d.value(i)
	return buf, end
}

// partAt walks the content part at data[i] into p and returns the index
// after it. A part that is not an object leaves p empty.
func (d *oaiRequestDecoder) partAt(i int, p *oaiPartScan) int {
	if d.kindAt(i) != jsonObject {
		_, end := d.value(i)
		return end
	}
	m := d.members(i)
	for {
		key, ok := d.nextMember(&m)
		if !ok {
			break
		}
		switch key {
		case "type":
			m.i = d.first(&p.typ, m.i)
		case "text":
			if p.text.kind == jsonAbsent && d.kindAt(m.i) == jsonString {
				p.text, p.textStr, p.textForm, m.i = d.textAt(m.i)
				break
			}
			m.i = d.first(&p.text, m.i)
		case "cache_control":
			m.i = d.first(&p.cacheControl, m.i)
		case "refusal":
			m.i = d.first(&p.refusal, m.i)
		case "image_url":
			m.i = d.firstObject(&p.imageURL, m.i, p.image[:], "url", "detail")
		case "file":
			m.i = d.firstObject(&p.file, m.i, p.fileFields[:], "filename", "file_data", "file_id")
		default:
			_, m.i = d.value(m.i)
		}
	}
	return m.i
}

// firstObject is first for a member whose value, when it is an object, is
// walked in the same pass, its members named names picked into out.
func (d *oaiRequestDecoder) firstObject(dst *jsonSpan, i int, out []jsonSpan, names ...string) int {
	if dst.kind != jsonAbsent || d.kindAt(i) != jsonObject {
		return d.first(dst, i)
	}
	end := d.pickAt(i, out, names...)
	*dst = jsonSpan{start: i, end: end, kind: jsonObject}
	return end
}

// contentPart decodes content part j of message idx and appends it to buf.
func (d *oaiRequestDecoder) contentPart(p *oaiPartScan, idx, j int, role string, buf []Part) []Part {
	at := oaiAt(idx, oaiStageContent)
	switch typ := d.str(p.typ); {
	case typ == "text":
		if p.text.isString() {
			part := Part{Type: PartText, Text: p.textStr, textForm: p.textForm}
			if p.cacheControl.kind == jsonObject {
				// OpenRouter-style clients mark cache breakpoints on
				// OpenAI parts; keep them for backends that use them.
				part.CacheControl = d.raw(p.cacheControl)
			}
			buf = append(buf, part)
		}
	case typ == "refusal" && role == "assistant":
		if p.refusal.isString() {
			buf = append(buf, d.textPart(p.refusal))
		}
	case typ == "image_url" && (role == "user" || role == "tool"):
		if part, ok := d.image(p, idx, j); ok {
			buf = append(buf, part)
		}
	case typ == "file" && role == "user":
		if part, ok := d.file(p, idx); ok {
			buf = append(buf, part)
		}
	case typ == "input_audio":
		d.drop(at, "messages.content.input_audio", "audio input is not supported")
	case typ == "":
		d.fail(at, oaiBadRequest(fmt.Sprintf("messages[%d].content[%d].type", idx, j), "messages[%d].content[%d].type: a part type is required", idx, j))
	default:
		d.drop(at, "messages.content."+typ, fmt.Sprintf("%s parts are not supported in %s messages", typ, role))
	}
	return buf
}

func (d *oaiRequestDecoder) image(p *oaiPartScan, idx, j int) (Part, bool) {
	url, detail := d.str(p.imageURL), ""
	if p.imageURL.kind == jsonObject {
		url, detail = d.str(p.image[0]), d.str(p.image[1])
	}
	if url == "" {
		d.fail(oaiAt(idx, oaiStageContent), oaiBadRequest(fmt.Sprintf("messages[%d].content[%d].image_url.url", idx, j),
			"messages[%d].content[%d].image_url.url: an image URL is required", idx, j))
		return Part{}, false
	}
	m := &Media{Detail: detail}
	if strings.HasPrefix(url, "data:") {
		mt, data, ok := oaiParseDataURL(url)
		if !ok {
			d.drop(oaiAt(idx, oaiStageContent), "messages.content.image_url", "data URLs must be base64-encoded")
			return Part{}, false
		}
		m.MediaType, m.Data = mt, data
	} else {
		m.URL = url
	}
	return Part{Type: PartImage, Media: m}, true
}

func (d *oaiRequestDecoder) file(p *oaiPartScan, idx int) (Part, bool) {
	f := &p.fileFields
	m := &Media{Filename: d.str(f[0])}
	switch data, id := d.str(f[1]), d.str(f[2]); {
	case data != "":
		if mt, payload, ok := oaiParseDataURL(data); ok {
			m.MediaType, m.Data = mt, payload
		} else {
			// Bare base64. Chat Completions accepts only PDFs as files.
			m.MediaType, m.Data = "application/pdf", data
		}
	case id != "":
		m.FileID = id
	default:
		d.drop(oaiAt(idx, oaiStageContent), "messages.content.file", "a file part needs file_data or file_id")
		return Part{}, false
	}
	return Part{Type: PartDocument, Media: m}, true
}
