package dialect

import "github.com/louter/louter/translate"

// Response does for a complete response what NewDecoder does
// for a stream: it parses the tool calls and reasoning the server left in
// the text parts, restores the tool names and call ids the request encoder
// rewrote, and reports tool_use when it found calls the server did not.
//
// resp is not modified. When the dialect can change nothing, resp itself
// is returned; otherwise a new Response whose parts are in the order the
// stream would have produced them.
func Response(resp *translate.Response, cfg Config) *translate.Response {
	plan := newDialectPlan(cfg)
	if resp == nil || plan.passThrough() {
		return resp
	}
	out := *resp
	out.Parts = make([]translate.Part, 0, len(resp.Parts)+1)

	// As in the stream, consecutive text parts are one run of text for one
	// parser; a native tool call ends the run. Parts made from segments
	// merge with the part before them when it was made from segments of
	// the same kind, as the stream's Emitter merges deltas into the open
	// block.
	var (
		parser *ContentParser
		runs   int
		segs   []Segment
		own    = -1 // index in out.Parts of the last part made from segments
	)
	emit := func() {
		for i := range segs {
			s := &segs[i]
			var t translate.PartType
			switch s.Kind {
			case SegmentText:
				t = translate.PartText
			case SegmentReasoning:
				t = translate.PartThinking
			case SegmentToolCall:
				out.Parts = append(out.Parts, translate.Part{Type: translate.PartToolCall, ToolCall: &translate.ToolCall{
					ID: translate.NewCallID(), Name: plan.parsedCallName(s.Name), Arguments: parsedArguments(s.Arguments),
				}})
				own = -1
				continue
			default:
				continue
			}
			if s.Text == "" {
				continue
			}
			if own >= 0 && own == len(out.Parts)-1 && out.Parts[own].Type == t {
				out.Parts[own].Text += s.Text
				continue
			}
			out.Parts = append(out.Parts, translate.Part{Type: t, Text: s.Text})
			own = len(out.Parts) - 1
		}
		segs = segs[:0]
	}
	closeRun := func() {
		if parser != nil {
			segs = parser.Close(segs)
			parser = nil
			emit()
		}
	}
	for i := range resp.Parts {
		p := resp.Parts[i]
		switch p.Type {
		case translate.PartText:
			if parser == nil {
				parser = NewContentParser(plan.parserConfig(runs))
				runs++
			}
			segs = parser.Feed(segs, p.Text)
			emit()
			continue
		case translate.PartToolCall:
			closeRun()
			if p.ToolCall != nil {
				tc := *p.ToolCall
				tc.ID, tc.Name = plan.clientID(tc.ID), plan.clientName(tc.Name)
				p.ToolCall = &tc
			}
		}
		out.Parts = append(out.Parts, p)
		own = -1
	}
	closeRun()

	switch {
	case out.HasToolCalls():
		if out.StopReason == "" || out.StopReason == translate.StopEndTurn || out.StopReason == translate.StopSequence {
			out.StopReason, out.StopSequence = translate.StopToolUse, ""
		}
	case out.StopReason == translate.StopToolUse:
		plan.warnMsg("finish reason tool_calls without a tool call reported as end_turn")
		out.StopReason = translate.StopEndTurn
	}
	return &out
}

// parsedArguments is "{}" for a call parsed without arguments, as the
// stream's Emitter makes it.
func parsedArguments(args string) string {
	if args == "" {
		return "{}"
	}
	return args
}
