package translate

import (
	"fmt"
	"strings"
)

// respPartNames are the members of a content part the decoder reads, in
// the order of respPartScan.
var respPartNames = []string{"type", "text", "refusal", "detail", "image_url", "file_id", "filename", "file_data", "file_url"}

// respPartScan holds a content part's members named by respPartNames.
type respPartScan [9]jsonSpan

// content decodes the content (field "content") or tool output (field
// "output") of input item idx, the value at data[i]: a string or an array
// of parts. It appends the parts to buf and returns buf and the index
// after the value. role says which part types are carried.
func (d *respRequestDecoder) content(i, idx int, field, role string, buf []Part) ([]Part, int) {
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
			var p respPartScan
			if a.i = d.pickAt(a.i, p[:], respPartNames...); d.bad {
				break
			}
			buf = d.contentPart(&p, idx, field, j, role, buf)
		}
		return buf, a.i
	default:
		path := fmt.Sprintf("input[%d].%s", idx, field)
		d.fail(respAt(idx, respStageContent), respBadRequest(path, "%s: must be a string or an array of content parts", path))
	}
	_, end := d.value(i)
	return buf, end
}

// toolOutput decodes a tool output, the value at data[i]: a string, or
// (Codex's custom tools, images from view_image) an array of input_text /
// input_image parts. Any other value is passed on as its JSON text rather
// than lost.
func (d *respRequestDecoder) toolOutput(i, idx int, buf []Part) ([]Part, int) {
	switch d.kindAt(i) {
	case jsonString, jsonArray, jsonNull:
		return d.content(i, idx, "output", "tool", buf)
	}
	sp, end := d.value(i)
	if !d.bad {
		buf = append(buf, Part{Type: PartText, Text: d.rawString(sp)})
	}
	return buf, end
}

// contentPart decodes content part j of item idx and appends it to buf,
// unless it is left out (its reason recorded) or empty.
func (d *respRequestDecoder) contentPart(p *respPartScan, idx int, field string, j int, role string, buf []Part) []Part {
	at := respAt(idx, respStageContent)
	path := func() string { return fmt.Sprintf("input[%d].%s[%d]", idx, field, j) }
	typ := d.str(p[0])
	switch typ {
	case "input_text", "output_text", "text", "summary_text", "reasoning_text":
		if p[1].isString() {
			buf = append(buf, d.textPart(p[1]))
		}
		return buf
	case "refusal":
		if p[2].isString() {
			buf = append(buf, d.textPart(p[2]))
		}
		return buf
	case "input_image":
		if role == "system" || role == "assistant" {
			break
		}
		if part, ok := d.image(p, at, path); ok {
			buf = append(buf, part)
		}
		return buf
	case "input_file":
		if role == "system" || role == "assistant" {
			break
		}
		if part, ok := d.file(p, at); ok {
			buf = append(buf, part)
		}
		return buf
	case "":
		d.fail(at, respBadRequest(path()+".type", "%s.type: a part type is required", path()))
		return buf
	default:
		d.drop(at, "content."+typ, fmt.Sprintf("%s parts are not supported", typ))
		return buf
	}
	d.drop(at, "content."+typ, "only text is carried in "+role+" messages")
	return buf
}

func (d *respRequestDecoder) image(p *respPartScan, at int, path func() string) (Part, bool) {
	m := &Media{Detail: d.str(p[3])}
	if m.Detail == "auto" {
		m.Detail = "" // the default everywhere
	}
	url := d.str(p[4])
	switch {
	case strings.HasPrefix(url, "data:"):
		mt, data, ok := oaiParseDataURL(url)
		if !ok {
			d.drop(at, "input_image.image_url", "data URLs must be base64-encoded")
			return Part{}, false
		}
		m.MediaType, m.Data = mt, data
	case url != "":
		m.URL = url
	case p[5].isString():
		m.FileID = d.str(p[5])
	default:
		d.fail(at, respBadRequest(path()+".image_url", "%s: input_image needs image_url or file_id", path()))
		return Part{}, false
	}
	return Part{Type: PartImage, Media: m}, true
}

func (d *respRequestDecoder) file(p *respPartScan, at int) (Part, bool) {
	m := &Media{Filename: d.str(p[6])}
	switch data, id, url := d.str(p[7]), d.str(p[5]), d.str(p[8]); {
	case data != "":
		if mt, payload, ok := oaiParseDataURL(data); ok {
			m.MediaType, m.Data = mt, payload
		} else {
			m.MediaType, m.Data = "application/pdf", data // bare base64: a PDF, as OpenAI assumes
		}
	case id != "":
		m.FileID = id
	case url != "":
		m.URL = url
	default:
		d.drop(at, "input_file", "an input_file part needs file_data, file_id or file_url")
		return Part{}, false
	}
	return Part{Type: PartDocument, Media: m}, true
}
