package translate

import (
	"slices"
)

// DecodeRequest implements Codec. It parses a Responses request, as Codex
// sends it, into the IR. Input items are grouped into turns: the consecutive
// items the model produced in one turn (reasoning, text, function calls)
// into one assistant message, and the tool outputs that answer them, with
// any user text that follows, into one user message. instructions and the
// leading run of system and developer messages are the system prompt.
//
// Custom (freeform) tools become function tools with one string argument
// (see Tool.Custom); hosted tools (web search, file search, ...) cannot run
// anywhere but at OpenAI and are left out.
//
// The body is walked once and validated on the way, as by the OpenAI Chat
// decoder (reqScanner): the IR's strings and raw subtrees are views of
// body, which must not change while the IR is in use.
func (openAIResponsesCodec) DecodeRequest(body []byte) (*Request, error) {
	d := respRequestDecoder{reqScanner: reqScanner{data: body}, req: &Request{}, leading: true, open: -1}
	d.takeScratch()
	err := d.decode()
	d.returnScratch()
	if err != nil {
		return nil, err
	}
	return d.req, nil
}

// respRequestDecoder holds the state of one DecodeRequest call.
type respRequestDecoder struct {
	reqScanner
	req *Request

	leading bool // still in the run of system messages that opens the input
	// open is where the items of the turn being read go: the assistant
	// message the model's items join, or the user message tool outputs and
	// user text join; -1 when the next item starts a new message.
	open     int
	openRole Role
	// toolRun is whether the open user message holds tool outputs, which
	// later outputs and user text join.
	toolRun bool

	// buf collects one item's content parts before they are copied into a
	// slice of the right size.
	buf []Part
}

// The order of the checks of a Responses request (see oaiAt for why it
// matters): the top-level members decode reads first, then each input
// item's checks, then the other top-level fields in the body's order.
const (
	respAtModel = iota
	respAtPreviousResponse
	respAtConversation
	respAtBackground
	respAtInstructions
	respAtInput
	respAtItems
)

// The checks of one input item, in order.
const (
	respStageObject  = iota // the item is an object
	respStageItem           // its role, name, call_id, type
	respStageContent        // its content or output
	respStages
)

// respAt is the place of stage of input item i in the order of the checks.
func respAt(i, stage int) int { return respAtItems + i*respStages + stage }

// respDroppedFields are request fields with no equivalent in the other
// protocols, with the reason recorded when a request uses them.
var respDroppedFields = map[string]string{
	"prompt_cache_key":       "OpenAI prompt cache routing has no equivalent",
	"prompt_cache_retention": "OpenAI prompt cache retention has no equivalent",
	"client_metadata":        "client metadata is for OpenAI's own logs",
	"metadata":               "stored-response metadata has no equivalent",
	"service_tier":           "service tiers are provider-specific",
	"truncation":             "louter does not truncate conversations",
	"max_tool_calls":         "a limit on hosted tool calls has no equivalent",
	"top_logprobs":           "log probabilities are not translated",
	"prompt":                 "stored prompt templates exist only at OpenAI",
}

// respCompactionTriggerMessage refuses a compaction_trigger item (Codex's
// remote compaction), which the gateway serves before translation when it
// can.
const respCompactionTriggerMessage = "input[%d]: compaction_trigger asks for a compaction of the history, which louter serves only as the request's last input item with stored responses enabled (stored_responses); send it last, or compact with POST /v1/responses/compact"

func respBadRequest(param, format string, args ...any) *Error {
	return oaiBadRequest(param, format, args...)
}

func (d *respRequestDecoder) decode() *Error {
	// The members read first: the first of each name, as gjson's Get.
	var model, prev, conv, background, instructions, input jsonSpan
	m, e := d.bodyMembers()
	if e != nil {
		return e
	}
	for {
		key, ok := d.nextMember(&m)
		if !ok {
			break
		}
		switch key {
		case "model":
			m.i = d.first(&model, m.i)
		case "previous_response_id":
			m.i = d.first(&prev, m.i)
		case "conversation":
			m.i = d.first(&conv, m.i)
		case "background":
			m.i = d.first(&background, m.i)
		case "instructions":
			m.i = d.first(&instructions, m.i)
		case "input":
			if input.kind == jsonAbsent && d.kindAt(m.i) == jsonArray {
				start := m.i
				m.i = d.items(m.i)
				input = jsonSpan{start: start, end: m.i, kind: jsonArray}
				break
			}
			m.i = d.first(&input, m.i)
		default:
			m.i = d.field(key, m.i)
		}
	}
	if e := d.bodyEnd(&m); e != nil {
		return e
	}

	req := d.req
	if !model.isString() {
		d.fail(respAtModel, respBadRequest("model", "model: a model name is required"))
	}
	if prev.isString() {
		d.fail(respAtPreviousResponse, respStateless("previous_response_id"))
	}
	if conv.isString() {
		d.fail(respAtConversation, respStateless("conversation"))
	}
	if d.isTrue(background) {
		d.fail(respAtBackground, respBadRequest("background", "background: louter answers requests while they are open; background responses are not supported"))
	}
	switch instructions.kind {
	case jsonAbsent, jsonNull:
	case jsonString:
		if instructions.isString() {
			// The system prompt starts with the instructions, whatever
			// the order of the members.
			req.System = slices.Insert(req.System, 0, d.textPart(instructions))
		}
	default:
		d.fail(respAtInstructions, oaiInvalidType("instructions", wantString, d.result(instructions)))
	}
	switch input.kind {
	case jsonString:
		req.Messages = append(req.Messages, Message{Role: RoleUser, Parts: []Part{d.textPart(input)}})
	case jsonArray:
	case jsonAbsent, jsonNull:
		d.fail(respAtInput, respBadRequest("input", "input: field is required"))
	default:
		d.fail(respAtInput, oaiInvalidType("input", wantStringOrArray, d.result(input)))
	}
	if d.err != nil {
		return d.err
	}
	req.Model = d.str(model)
	d.recordDrops(req)
	return nil
}

// respStateless is the error for a member that refers to stored state.
func respStateless(key string) *Error {
	return respBadRequest(key, "%s: louter is stateless and stores no responses; send the whole conversation in input (as Codex does with store:false)", key)
}

// textPart makes a text part of a string value, with its form.
func (d *reqScanner) textPart(sp jsonSpan) Part {
	p := Part{Type: PartText}
	p.Text, p.textForm = d.text(sp)
	return p
}

// field decodes the top-level member key, other than those decode reads
// first, whose value starts at data[i], and returns the index after the
// value. Every occurrence of a name is decoded in turn.
func (d *respRequestDecoder) field(key string, i int) int {
	if key == "tools" {
		return d.tools(i)
	}
	v, end := d.value(i)
	if d.bad {
		return end
	}
	req := d.req
	var err *Error
	switch key {
	case "tool_choice":
		d.toolChoice(v)
	case "parallel_tool_calls":
		req.ParallelToolCalls, err = oaiBool(d.result(v), key)
	case "max_output_tokens":
		req.MaxTokens, err = oaiMaxTokens(d.result(v), key)
	case "temperature":
		req.Temperature, err = oaiFloat(d.result(v), key, ruleTemp2)
	case "top_p":
		req.TopP, err = oaiFloat(d.result(v), key, ruleUnit)
	case "reasoning":
		d.reasoning(v)
	case "text":
		d.textSettings(v)
	case "stream":
		var b *bool
		if b, err = oaiBool(d.result(v), key); b != nil {
			req.Stream = *b
		}
	case "stream_options":
		// include_obfuscation needs no translation: louter never pads events.
	case "user":
		req.User, err = oaiString(d.result(v), key)
	case "store":
		if d.isTrue(v) {
			d.drop(oaiAtFields, "store", "louter is stateless and stores no responses")
		}
	case "include":
		for inc := range d.each(v) {
			// Encrypted reasoning is always returned when there is any:
			// a stateless client needs it to continue.
			if s := d.str(inc); s != "reasoning.encrypted_content" {
				d.drop(oaiAtFields, "include."+s, "not available from other protocols")
			}
		}
	case "safety_identifier":
		if req.User == "" && v.kind == jsonString {
			req.User = d.str(v)
		}
	default:
		if v.kind == jsonNull || v.kind == jsonBool && !d.isTrue(v) {
			break // an explicit default asks for nothing
		}
		reason, known := respDroppedFields[key]
		if !known {
			reason = DropUnknown
		}
		d.drop(oaiAtFields, key, reason)
	}
	if err != nil {
		d.fail(oaiAtFields, err)
	}
	return end
}
