package translate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// The parts of a Gemini request's contents: texts, thoughts, media,
// function calls and their responses.

// parts reads the parts of contents[i].
func (d *geminiRequestDecoder) parts(arr gjson.Result, i int, role Role) ([]Part, *Error) {
	if !arr.IsArray() {
		if arr.Exists() && arr.Type != gjson.Null {
			return nil, geminiBadRequest("contents", "contents[%d].parts: must be an array", i)
		}
		return nil, nil
	}
	if role == RoleAssistant {
		d.pending = d.pending[:0]
	}
	var out []Part
	var err *Error
	j := 0
	arr.ForEach(func(_, p gjson.Result) bool {
		if !p.IsObject() {
			err = geminiBadRequest("contents", "contents[%d].parts[%d]: must be an object", i, j)
			return false
		}
		out, err = d.part(out, p, i, j, role)
		j++
		return err == nil
	})
	return out, err
}

// part reads one part and appends what it yields to out.
func (d *geminiRequestDecoder) part(out []Part, p gjson.Result, i, j int, role Role) ([]Part, *Error) {
	var text, thought, sig, inline, file, call, resp gjson.Result
	p.ForEach(func(k, v gjson.Result) bool {
		switch geminiCamel(k.Str) {
		case "text":
			text = v
		case "thought":
			thought = v
		case "thoughtSignature":
			sig = v
		case "inlineData":
			inline = v
		case "fileData":
			file = v
		case "functionCall":
			call = v
		case "functionResponse":
			resp = v
		case "executableCode", "codeExecutionResult":
			d.req.Drop("contents.parts."+k.Str, "code execution parts are specific to Gemini")
		case "videoMetadata", "partMetadata", "mediaResolution":
			d.req.Drop("contents.parts."+k.Str, "not translated")
		}
		return true
	})
	switch {
	case call.IsObject():
		if role != RoleAssistant {
			return out, geminiBadRequest("contents", "contents[%d].parts[%d]: functionCall parts belong in model turns", i, j)
		}
		return append(out, d.functionCall(call, sig.Str, i, j)), nil
	case resp.IsObject():
		return append(out, d.functionResponse(resp, i, j)), nil
	case inline.IsObject():
		data := inline.Get("data")
		if data.Type != gjson.String {
			return out, geminiBadRequest("contents", "contents[%d].parts[%d].inlineData.data: must be a base64 string", i, j)
		}
		return d.media(out, geminiGet(inline, "mimeType", "mime_type").Str, &Media{Data: data.Str}), nil
	case file.IsObject():
		uri := geminiGet(file, "fileUri", "file_uri").Str
		if uri == "" {
			return out, geminiBadRequest("contents", "contents[%d].parts[%d].fileData.fileUri: required", i, j)
		}
		return d.media(out, geminiGet(file, "mimeType", "mime_type").Str, &Media{URL: uri}), nil
	case text.Type == gjson.String, text.Type == gjson.Null && sig.Type == gjson.String:
		// A part with a signature and no text is the empty signed part
		// louter streams a signature on, as the genai SDKs echo it: their
		// Part drops an empty text (omitempty). It keeps its signature.
		if thought.Type == gjson.True || (text.Str == "" && sig.Str != "" && sig.Str != geminiSkipSignature) {
			// A thought summary, or an empty part carrying a signature:
			// both are reasoning in the IR.
			s := sig.Str
			if s == geminiSkipSignature {
				s = ""
			}
			if text.Str == "" && s == "" {
				return out, nil
			}
			if role == RoleAssistant {
				return geminiAppendThought(out, text.Str, s), nil
			}
			return append(out, Part{Type: PartThinking, Text: text.Str, Signature: s}), nil
		}
		if text.Str == "" {
			return out, nil
		}
		return append(out, Part{Type: PartText, Text: text.Str}), nil
	}
	return out, nil
}

// geminiAppendThought appends a model turn's thought part, joining it to
// the unsigned thought right before it. A Gemini stream carries one
// reasoning block as several thought parts, the signature on the last (louter's
// own encoder sends an Anthropic block's deltas that way, its signature last),
// and clients echo the parts as they got them. Anthropic needs the block
// whole: one text under one signature. Apart, the unsigned pieces would be
// dropped and the signature would sign a text it was not made for. A signed
// part ends the block, so two signed blocks in a row stay two.
func geminiAppendThought(out []Part, text, sig string) []Part {
	if n := len(out); n > 0 && out[n-1].Type == PartThinking && out[n-1].Signature == "" {
		last := &out[n-1]
		last.Text += text
		last.Signature = sig
		return out
	}
	return append(out, Part{Type: PartThinking, Text: text, Signature: sig})
}

// continueThought joins a model content's leading thought to the unsigned
// thought that ends the model content right before it, and returns the
// parts left. Clients that keep a streamed answer as it came (the genai
// SDKs' chats) send one model content per chunk, so one reasoning block
// spans contents just as it spans parts.
func (d *geminiRequestDecoder) continueThought(parts []Part) []Part {
	msgs := d.req.Messages
	if len(parts) == 0 || parts[0].Type != PartThinking || len(msgs) == 0 || msgs[len(msgs)-1].Role != RoleAssistant {
		return parts
	}
	prev := msgs[len(msgs)-1].Parts
	last := &prev[len(prev)-1]
	if last.Type != PartThinking || last.Signature != "" {
		return parts
	}
	last.Text += parts[0].Text
	last.Signature = parts[0].Signature
	return parts[1:]
}

// media appends an inline or referenced file as an image or a document.
func (d *geminiRequestDecoder) media(out []Part, mime string, m *Media) []Part {
	m.MediaType = mime
	switch {
	case strings.HasPrefix(mime, "image/"):
		return append(out, Part{Type: PartImage, Media: m})
	case mime == "application/pdf", strings.HasPrefix(mime, "text/"):
		return append(out, Part{Type: PartDocument, Media: m})
	}
	d.req.Drop("contents.parts.inlineData", fmt.Sprintf("media type %q is not supported", mime))
	return out
}

// functionCall reads a model turn's call. A call without an id gets one
// from its position ("call_<content>_<part>"), so the same history yields
// the same ids turn after turn. A thought signature stays beside the id
// (ToolCall.Signature), for a Gemini backend alone: folded in, it made ids
// of hundreds of bytes that OpenAI backends refuse, for signatures they
// cannot use (LangChain sends one, a placeholder, on calls it gave no id).
func (d *geminiRequestDecoder) functionCall(call gjson.Result, sig string, i, j int) Part {
	wire := call.Get("id").Str
	name := call.Get("name").Str
	id := wire
	if id == "" {
		id = "call_" + strconv.Itoa(i) + "_" + strconv.Itoa(j)
	}
	switch {
	case sig == geminiSkipSignature:
		sig = "" // the encoder puts the placeholder where Gemini needs one
	case sig != "" && !geminiBase64(sig):
		// thoughtSignature is a bytes field: Gemini would refuse it.
		d.req.Drop("contents.parts.thoughtSignature", "not base64")
		sig = ""
	}
	args := call.Get("args")
	argText := "{}"
	if args.IsObject() {
		argText = args.Raw
	}
	ref := geminiCallRef{id: id, name: name}
	if wire != "" {
		if d.calls == nil {
			d.calls = map[string]geminiCallRef{}
		}
		d.calls[wire] = ref
	}
	d.pending = append(d.pending, ref)
	return Part{Type: PartToolCall, ToolCall: &ToolCall{ID: id, Name: name, Arguments: argText, Signature: sig}}
}

// functionResponse reads a tool result. Its call is found by id, or else
// as the first unanswered call of the same name in the latest model turn.
func (d *geminiRequestDecoder) functionResponse(resp gjson.Result, i, j int) Part {
	wire := resp.Get("id").Str
	name := resp.Get("name").Str
	callID := ""
	if ref, ok := d.calls[wire]; ok && wire != "" {
		callID = ref.id
		if name == "" {
			name = ref.name
		}
		d.answer(ref.id)
	} else if wire != "" {
		callID = wire
		d.answer(wire)
	} else {
		for _, ref := range d.pending {
			if ref.name == name || name == "" {
				callID = ref.id
				if name == "" {
					name = ref.name
				}
				break
			}
		}
		if callID == "" {
			callID = "call_" + strconv.Itoa(i) + "_" + strconv.Itoa(j)
		}
		d.answer(callID)
	}
	tr := &ToolResult{CallID: callID, Name: name}
	r := resp.Get("response")
	out, errv := r.Get("output"), r.Get("error")
	switch {
	case out.Exists():
		tr.Content = geminiResultText(tr.Content, out)
	case errv.Exists():
		tr.IsError = true
		tr.Content = geminiResultText(tr.Content, errv)
	case aiSDKResult(r, name):
		tr.Content = geminiResultText(tr.Content, r.Get("content"))
	case r.Exists() && r.Type != gjson.Null:
		tr.Content = geminiResultText(tr.Content, r)
	}
	resp.Get("parts").ForEach(func(_, p gjson.Result) bool {
		if in := geminiGet(p, "inlineData", "inline_data"); in.IsObject() {
			mime := geminiGet(in, "mimeType", "mime_type").Str
			typ := PartDocument
			if strings.HasPrefix(mime, "image/") {
				typ = PartImage
			}
			tr.Content = append(tr.Content, Part{Type: typ, Media: &Media{MediaType: mime, Data: in.Get("data").Str}})
		}
		return true
	})
	return Part{Type: PartToolResult, ToolResult: tr}
}

// aiSDKResult reports whether a functionResponse's response is the
// Vercel AI SDK's wrapper, {"name": <the function>, "content": <output>},
// and nothing else: @ai-sdk/google (opencode's Google provider, and most
// TypeScript agents on Gemini) wraps every tool output so. Its content is
// the output; the whole object as JSON text would show another backend's
// model a wrapper no tool wrote.
func aiSDKResult(r gjson.Result, name string) bool {
	if !r.IsObject() || r.Get("name").Str != name || !r.Get("content").Exists() {
		return false
	}
	n := 0
	r.ForEach(func(_, _ gjson.Result) bool { n++; return n <= 2 })
	return n == 2
}

// answer marks the call id as answered.
func (d *geminiRequestDecoder) answer(id string) {
	for k, ref := range d.pending {
		if ref.id == id {
			d.pending = append(d.pending[:k], d.pending[k+1:]...)
			return
		}
	}
}

// geminiResultText appends a tool result value as text: a string as it is,
// anything else as its JSON text.
func geminiResultText(dst []Part, v gjson.Result) []Part {
	s := v.Raw
	if v.Type == gjson.String {
		s = v.Str
	}
	if s == "" {
		return dst
	}
	return append(dst, Part{Type: PartText, Text: s})
}
