package mock

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/louter/louter/translate"
)

// OverflowHeader chooses whose wording the overflow scenarios answer in:
// one of the keys of overflowWordings. Without it, a mock answers as the
// reference server of its protocol (anthropic, openai, responses, gemini).
const OverflowHeader = "X-Mock-Overflow"

// overflowWording is how one server says that a prompt does not fit the
// context window (see testdata/context_overflow for the published
// originals): the error body of its HTTP 400, and the event that carries
// the error inside a stream.
type overflowWording struct {
	protocol translate.Protocol
	body     string // the JSON error body
	event    string // the whole SSE event, blank line included
}

// overflowWordings are the servers the overflow scenarios can imitate. The
// figures are the same everywhere: a 250000-token prompt against a
// 200000-token window.
var overflowWordings = map[string]overflowWording{
	"anthropic": {
		protocol: translate.ProtocolAnthropic,
		body:     `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}`,
		event:    "event: error\ndata: %s\n\n",
	},
	"openai": {
		protocol: translate.ProtocolOpenAIChat,
		body:     `{"error":{"message":"This model's maximum context length is 200000 tokens. However, your messages resulted in 250000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
		event:    "data: %s\n\n",
	},
	"llamacpp": {
		protocol: translate.ProtocolOpenAIChat,
		body:     `{"error":{"code":400,"message":"request (250000 tokens) exceeds the available context size (200000 tokens)","type":"exceed_context_size_error","n_prompt_tokens":250000,"n_ctx":200000}}`,
		event:    "data: %s\n\n",
	},
	"vllm": {
		protocol: translate.ProtocolOpenAIChat,
		body:     `{"object":"error","message":"This model's maximum context length is 200000 tokens. However, you requested 250000 tokens (240000 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`,
		// vLLM wraps an in-stream error in "error".
		event: `data: {"error":%s}` + "\n\n",
	},
	"responses": {
		protocol: translate.ProtocolOpenAIResponses,
		body:     `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`,
		event:    "event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":9,\"response\":{\"id\":\"resp_mock_overflow\",\"object\":\"response\",\"status\":\"failed\",\"error\":{\"code\":\"context_length_exceeded\",\"message\":\"Your input exceeds the context window of this model. Please adjust your input and try again.\"},\"output\":[]}}\n\n",
	},
	"gemini": {
		protocol: translate.ProtocolGemini,
		body:     `{"error":{"code":400,"message":"The input token count (250000) exceeds the maximum number of tokens allowed (200000).","status":"INVALID_ARGUMENT"}}`,
		event:    "data: %s\n\n",
	},
}

// overflowDefault is the wording of each protocol's reference server.
var overflowDefault = map[translate.Protocol]string{
	translate.ProtocolAnthropic:       "anthropic",
	translate.ProtocolOpenAIChat:      "openai",
	translate.ProtocolOpenAIResponses: "responses",
	translate.ProtocolGemini:          "gemini",
}

func init() {
	scenarios["overflow"] = func(x *exchange) *reply { return x.overflowReply(false) }
	scenarios["overflow_midstream"] = func(x *exchange) *reply { return x.overflowReply(true) }
}

// overflowReply answers as a server whose context window the prompt does
// not fit: a 400 before anything is sent, or (midstream, for a streaming
// request) a stream that starts and then carries the error, as proxies and
// servers that check late do.
func (x *exchange) overflowReply(midstream bool) *reply {
	name := strings.ToLower(strings.TrimSpace(x.overflowWording))
	if name == "" {
		name = overflowDefault[x.spec.protocol]
	}
	w, ok := overflowWordings[name]
	if !ok || w.protocol != x.spec.protocol {
		return &reply{err: translate.BadRequest(fmt.Sprintf("louter_mock: %s %q is no wording of protocol %s (known: %s)", OverflowHeader, name, x.spec.protocol, strings.Join(overflowNames(), ", ")))}
	}
	if !midstream || !x.req.Stream || x.jsonArray {
		return &reply{raw: &rawError{status: http.StatusBadRequest, body: []byte(w.body)}}
	}
	r := x.textReply(x.greeting())
	r.fault = faultRawEvent
	ev := w.event
	if strings.Contains(ev, "%s") {
		ev = fmt.Sprintf(ev, w.body)
	}
	r.faultEvent = []byte(ev)
	return r
}

// overflowNames lists the wordings, sorted.
func overflowNames() []string {
	names := make([]string, 0, len(overflowWordings))
	for n := range overflowWordings {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// rawError is an error answered with a body written as it is, in a
// server's own words rather than the codec's.
type rawError struct {
	status int
	body   []byte
}

// write answers the error.
func (e *rawError) write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_, _ = w.Write(e.body)
}
