package translate

import (
	"fmt"
	"math"
)

// DecodeRequest implements Codec. It parses a Chat Completions request, as
// sent by OpenAI clients (Cursor, Aider, the openai SDKs), into the IR.
//
// OpenAI puts the system prompt in messages; the IR keeps the leading run of
// system and developer messages in Request.System and later ones as
// RoleSystem messages. OpenAI sends one tool message per tool result; the IR
// (like Anthropic) keeps the results of one turn together in a single user
// message, followed by any user text of that turn.
//
// The body is walked once and validated on the way (no separate validation
// pass); the IR's strings and raw subtrees are views of body, which must
// not change while the IR is in use.
func (openAIChatCodec) DecodeRequest(body []byte) (*Request, error) {
	d := oaiRequestDecoder{reqScanner: reqScanner{data: body}, req: &Request{}, leading: true}
	d.takeScratch()
	err := d.decode()
	d.returnScratch()
	if err != nil {
		return nil, err
	}
	return d.req, nil
}

// oaiRequestDecoder holds the state of one DecodeRequest call.
type oaiRequestDecoder struct {
	reqScanner
	req *Request

	maxCompletionTokens int
	maxTokens           int
	safetyIdentifier    string

	// Conversation state, see messages.
	leading bool // still in the run of system messages that opens the conversation
	toolRun bool // the last IR message holds tool results that later results and user text join

	// pendingFunctions maps a deprecated function_call's name to the id
	// generated for it, so the role "function" message answering it can
	// refer to it.
	pendingFunctions map[string]string

	// contentBuf and callsBuf collect one message's content parts and tool
	// calls before they are copied into a slice of the right size.
	contentBuf, callsBuf []Part
}

// The checks of a request run in an order that is not the body's: the
// model first, then messages, each message's fields in a fixed order, then
// the other top-level fields in the body's order. An error or a dropped
// field found while walking the body is filed under its place in that
// order, so the error reported and the order of Request.Dropped do not
// depend on the order of the members.
const (
	oaiAtModel    = 0
	oaiAtMessages = 1
	oaiAtFields   = math.MaxInt // ties keep the body's order
)

// The checks of one message, in order.
const (
	oaiStageObject = iota // the message is an object
	oaiStageName
	oaiStageRole
	oaiStageToolCallID
	oaiStageContent
	oaiStageToolCalls
	oaiStageFunctionCall
	oaiStageAudio
	oaiStages
)

// oaiAt is the place of stage of message i in the order of the checks.
func oaiAt(i, stage int) int { return 2 + i*oaiStages + stage }

// oaiBadRequest is a 400 naming the offending field.
func oaiBadRequest(param, format string, args ...any) *Error {
	e := BadRequest(fmt.Sprintf(format, args...))
	e.Param = param
	return e
}

// oaiDroppedFields are request fields that have no equivalent elsewhere,
// with the reason recorded when a request uses them.
var oaiDroppedFields = map[string]string{
	"logprobs":               "log probabilities are not translated",
	"top_logprobs":           "log probabilities are not translated",
	"logit_bias":             "token ids are specific to OpenAI tokenizers",
	"store":                  "louter does not store completions",
	"metadata":               "stored-completion metadata has no equivalent",
	"service_tier":           "service tiers are provider-specific",
	"prediction":             "predicted outputs are not supported",
	"audio":                  "audio output is not supported",
	"modalities":             "only text output is supported",
	"web_search_options":     "the built-in web search tool is not supported",
	"verbosity":              "verbosity has no equivalent",
	"prompt_cache_key":       "OpenAI prompt cache routing has no equivalent",
	"prompt_cache_retention": "OpenAI prompt cache retention has no equivalent",
	"moderation":             "OpenAI moderation settings have no equivalent",
}

func (d *oaiRequestDecoder) decode() *Error {
	// model and messages: the first member of the name, as gjson's Get.
	var model, messages jsonSpan
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
		case "messages":
			if messages.kind == jsonAbsent && d.kindAt(m.i) == jsonArray {
				start := m.i
				m.i = d.messages(m.i)
				messages = jsonSpan{start: start, end: m.i, kind: jsonArray}
				break
			}
			m.i = d.first(&messages, m.i)
		default:
			m.i = d.field(key, m.i)
		}
	}
	if e := d.bodyEnd(&m); e != nil {
		return e
	}

	if !model.isString() {
		d.fail(oaiAtModel, oaiBadRequest("model", "model: a model name is required"))
	}
	switch messages.kind {
	case jsonAbsent, jsonNull:
		d.fail(oaiAtMessages, oaiBadRequest("messages", "messages: field is required"))
	case jsonArray:
	default:
		d.fail(oaiAtMessages, oaiInvalidType("messages", wantArray, d.result(messages)))
	}
	if d.err != nil {
		return d.err
	}

	req := d.req
	req.Model = d.str(model)
	d.recordDrops(req)
	if d.maxCompletionTokens > 0 {
		req.MaxTokens = d.maxCompletionTokens
	} else if d.maxTokens > 0 {
		req.MaxTokens = d.maxTokens
	}
	if req.User == "" {
		req.User = d.safetyIdentifier
	}
	return nil
}
