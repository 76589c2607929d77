package caddymodule

import (
	"bytes"
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

// releaseOnContent has attempt rw let go of the request's copies once its
// first content has gone to the client (onFirstContent). r is the request
// the attempt sends.
func (q *chatRequest) releaseOnContent(r *http.Request, rw *responseWriter) {
	rw.addObserver(&requestRelease{q: q, r: r}, hookFirstContent)
}

// requestRelease is the observer that lets go of the request's copies.
type requestRelease struct {
	nopObserver
	q *chatRequest
	r *http.Request
}

func (rr *requestRelease) onFirstContent(rw *responseWriter) {
	q := rr.q
	q.body, q.ir = nil, nil
	if q.conversation != nil {
		q.conversation.release()
	}
	releaseUpstreamBody(rr.r)
	slimRequest(rw.clientReq, q.ep.echoesRequest)
}

// slimRequest cuts the client's decoded request down, in place, to what the
// client-side encoders read once the answer is under way (the dialect
// decoder, made when the answer began, keeps its own copy of the tools):
// the model, the tools' names and kinds, the output limit and reasoning
// settings, and the stream options. A Responses client's answer ends with
// the response object, which echoes the request's tools (descriptions and
// schemas included), tool choice and text format, so with echo those are
// kept too. The system prompt, the messages and the rest go. The strings
// kept are copied, so that none of them holds the client's body, of which
// decoders keep views.
func slimRequest(req *translate.Request, echo bool) {
	if req == nil {
		return
	}
	req.Model = strings.Clone(req.Model)
	req.System, req.Messages = nil, nil
	if len(req.Tools) > 0 {
		tools := make([]translate.Tool, len(req.Tools))
		for i, t := range req.Tools {
			tools[i] = translate.Tool{Name: strings.Clone(t.Name), Custom: t.Custom}
			if echo {
				tools[i].Description = strings.Clone(t.Description)
				tools[i].Schema = bytes.Clone(t.Schema)
				tools[i].Strict = t.Strict
			}
		}
		req.Tools = tools
	}
	if req.Reasoning != nil {
		re := *req.Reasoning
		re.Mode = translate.ReasoningMode(strings.Clone(string(re.Mode)))
		re.Effort, re.Display = strings.Clone(re.Effort), strings.Clone(re.Display)
		req.Reasoning = &re
	}
	req.StopSequences, req.User = nil, ""
	if !echo {
		req.ToolChoice, req.ResponseFormat = nil, nil
		return
	}
	if tc := req.ToolChoice; tc != nil {
		c := translate.ToolChoice{Mode: translate.ToolChoiceMode(strings.Clone(string(tc.Mode))), Name: strings.Clone(tc.Name)}
		for _, a := range tc.Allowed {
			c.Allowed = append(c.Allowed, strings.Clone(a))
		}
		req.ToolChoice = &c
	}
	if rf := req.ResponseFormat; rf != nil {
		req.ResponseFormat = &translate.ResponseFormat{Type: strings.Clone(rf.Type), Name: strings.Clone(rf.Name),
			Description: strings.Clone(rf.Description), Schema: bytes.Clone(rf.Schema), Strict: rf.Strict}
	}
}
