package caddymodule

import (
	"net/http"
	"strings"

	"github.com/louter/louter/translate"
)

// Memory per stream: a streamed answer may run for minutes, and a coding
// agent's request is often 100 KB and more. While another backend of a
// fallback chain may still take over, the request must stay (each attempt
// starts from the client's body); once the first content event is on its
// way to the client, nothing can need it any more, and every copy is let
// go of: the client's body, the decoded request (but for the little the
// client-side encoders read), the body sent to the backend, and what the
// conversation key kept. A stream then holds what Caddy's own proxy holds,
// plus the translation's small state.

// requestRelease returns the function the response writer calls once the
// first content event of attempt rw has gone to the client (or the
// response ended). r is the request the attempt sent.
func (q *chatRequest) requestRelease(r *http.Request, rw *responseWriter) func() {
	return func() {
		q.body, q.ir = nil, nil
		if q.conversation != nil {
			q.conversation.release()
		}
		releaseUpstreamBody(r)
		slimRequest(rw.clientReq)
	}
}

// slimRequest cuts the client's decoded request down, in place, to what the
// client-side encoders read once the answer is under way (the dialect
// decoder, made when the answer began, keeps its own copy of the tools):
// the model, the tools' names and kinds, the output
// limit and reasoning settings (the Responses API echoes them), and the
// stream options. The system prompt, the messages and the rest go. The
// strings kept are copied, so that none of them holds the client's body,
// of which decoders may keep views.
func slimRequest(req *translate.Request) {
	if req == nil {
		return
	}
	req.Model = strings.Clone(req.Model)
	req.System, req.Messages = nil, nil
	if len(req.Tools) > 0 {
		tools := make([]translate.Tool, len(req.Tools))
		for i, t := range req.Tools {
			tools[i] = translate.Tool{Name: strings.Clone(t.Name), Custom: t.Custom}
		}
		req.Tools = tools
	}
	if req.Reasoning != nil {
		re := *req.Reasoning
		re.Mode = translate.ReasoningMode(strings.Clone(string(re.Mode)))
		re.Effort, re.Display = strings.Clone(re.Effort), strings.Clone(re.Display)
		req.Reasoning = &re
	}
	req.ToolChoice, req.StopSequences, req.ResponseFormat, req.User = nil, nil, nil, ""
}
