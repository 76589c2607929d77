package translate

import "strings"

// RequestRoute is what TranslateRequest needs besides the client's body:
// the codecs of both sides and what routing decided. louter's handler
// fills one per attempt; record's Replay fills one from a recorded
// exchange, so a replay translates as the handler did.
type RequestRoute struct {
	// Client decodes the client's request; Backend encodes the backend's
	// (with the backend's dialect: BackendCodec).
	Client, Backend Codec
	// Dialect is the backend's configured dialect, nil when it has none.
	// It decides which tool names are shortened for the backend
	// (ToolNaming); the response side restores them.
	Dialect *Dialect
	// Model is the model the request was routed by. The client is
	// answered under the model its body names, or under this one when
	// the body names none (a Gemini client names it in the URL).
	Model string
	// BackendModel is the model the backend is asked for.
	BackendModel string
	// MaxTokens caps the request's output limit; 0: no cap.
	MaxTokens int
	// Stream, when not nil, is whether to stream as the URL says
	// (Gemini), which the body cannot tell.
	Stream *bool
	// CountInput estimates the input tokens of req as the backend counts
	// them (tokencount.Quick with the backend's framing, which this
	// package cannot import). Nil: no estimate is made.
	CountInput func(req *Request) int
	// Edit, when not nil, adjusts the decoded request for the backend
	// before it is encoded: what the backend's configuration says it
	// does not accept (louter leaves out sampling parameters an Anthropic
	// backend refuses, and Claude Code's billing line toward other
	// backends). It records what it removes with Request.Drop.
	Edit func(req *Request)
	// ServerTools is what to do with a server tool the backend cannot
	// run (server_tools.go).
	ServerTools ServerToolPolicy
	// ContextEditing is how the backend gets Anthropic's context
	// management (EditContext): applied by the backend where it can
	// (ContextAuto), or by louter, or left out.
	ContextEditing ContextEditing
	// Summarize writes compact_20260112's summary when louter applies the
	// edit (EditContext); nil: a request past its trigger is refused.
	Summarize Summarizer
}

// TranslateRequest translates a client's request for the backend: it
// decodes body with rt.Client (unless ir, body already decoded by the same
// codec, is given), renames the model to rt.BackendModel, caps the output
// limit at rt.MaxTokens, applies Anthropic's context edits or passes them
// on (EditContext, rt.ContextEditing), shortens the tool names the backend would refuse
// (WithBackendToolNames) and encodes the result with rt.Backend.
//
// It returns the backend's request body and the client's request as the
// client-side encoders need it: with the model the client asked for, what
// decoding and encoding dropped (Request.Dropped), and, for a stream whose
// client protocol reports the input early while the backend's does not
// report it at its start (UsageTimingCodec), rt.CountInput's estimate in
// InputTokensEstimate.
//
// The errors are DecodeRequest's, EditContext's and EncodeRequest's, as
// those return them (an *Error for a request the codec refuses); the caller words them
// for the client. ir, given or decoded, is modified (model, limit and
// stream mode); the returned request is a copy of it that shares its
// slices and, like DecodeRequest's result, may share memory with body,
// which must not be modified while either is in use; its Model is a copy,
// which the stream encoders may keep.
func TranslateRequest(body []byte, ir *Request, rt *RequestRoute) (out []byte, clientReq *Request, err error) {
	if ir == nil {
		if ir, err = rt.Client.DecodeRequest(body); err != nil {
			return nil, nil, err
		}
	}
	if tc, ok := rt.Client.(ToolChangeCodec); ok {
		// One tool list for the whole request (tool_changes.go).
		if e := tc.ApplyToolChanges(body, ir); e != nil {
			return nil, nil, e
		}
	}
	if rt.Stream != nil {
		ir.Stream = *rt.Stream
	}
	clientModel := strings.Clone(ir.Model) // the stream encoders keep it; ir's strings may be views of the body
	if clientModel == "" {
		clientModel = rt.Model
	}
	ir.Model = rt.BackendModel
	if rt.MaxTokens > 0 && (ir.MaxTokens == 0 || ir.MaxTokens > rt.MaxTokens) {
		ir.MaxTokens = rt.MaxTokens
	}
	if rt.Edit != nil {
		rt.Edit(ir)
	}
	backend := rt.Backend.Protocol()
	if e := EditContext(ir, backend, rt.ContextEditing, rt.CountInput, rt.Summarize); e != nil {
		return nil, nil, e
	}
	if e := applyServerToolPolicy(ir, backend, rt.ServerTools); e != nil {
		return nil, nil, e
	}
	enc := WithBackendToolNames(ir, ToolNaming(backend, rt.Dialect))
	enc = serverToolHistory(enc, backend) // server_tool_results.go
	if out, err = rt.Backend.EncodeRequest(enc); err != nil {
		return nil, nil, err
	}
	c := *ir
	c.Model = clientModel
	c.Dropped = enc.Dropped // what decoding and encoding left out, for the exchange record
	if rt.CountInput != nil && needsInputEstimate(ir, rt.Client.Protocol(), backend) {
		c.InputTokensEstimate = rt.CountInput(ir)
	}
	return out, &c, nil
}

// needsInputEstimate reports whether a translated stream of ir, from a
// backend of protocol backend to a client of protocol client, needs the
// input tokens announced before the backend reports them (Claude Code's
// context meter and auto-compaction read the first figure; the backend's
// counts replace the estimate as soon as they come).
func needsInputEstimate(ir *Request, client, backend Protocol) bool {
	if !ir.Stream {
		return false
	}
	if c, ok := codecAs[UsageTimingCodec](client); !ok || !c.InputUsageEarly() {
		return false
	}
	b, ok := codecAs[UsageTimingCodec](backend)
	return !ok || !b.InputUsageAtStart()
}

// BackendCodec returns the codec for a backend of protocol p configured
// with dialect d (nil when it has none): the registered codec, or the one
// it derives for d (DialectCodec). It is false when no codec is
// registered for p.
func BackendCodec(p Protocol, d *Dialect) (Codec, bool) {
	c, ok := Lookup(p)
	if !ok || d == nil {
		return c, ok
	}
	if dc, ok := c.(DialectCodec); ok {
		return dc.WithDialect(d), true
	}
	return c, true
}
