package mock

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/louter/louter/translate"
)

// reply is a scenario's answer in protocol-neutral form. The handler turns
// it into a translate.Response (non-streaming) or a script of IR events
// (streaming) and lets the client protocol's codec write the wire format.
type reply struct {
	blocks []block
	stop   translate.StopReason

	// err, when set, is answered instead, with its status, in the
	// protocol's error shape.
	err        *translate.Error
	retryAfter string // Retry-After header value sent with err

	// fault is a failure injected into the answer.
	fault fault
	// failErr, when set, is the error of a faultError instead of the
	// protocol's overloaded error.
	failErr *translate.Error
	// eventDelay, when not zero, replaces chunk_delay between events.
	eventDelay time.Duration
	// fixture, when set, names a file under fixtures_dir to replay instead.
	fixture string
	// raw, when set, is an error answered in a server's own words
	// (overflow.go).
	raw *rawError
	// faultEvent is the event faultRawEvent ends the stream with.
	faultEvent []byte
}

// block is one content block of a reply. deltas are the pieces a stream
// delivers it in: text or thinking deltas, or tool argument fragments.
type block struct {
	kind      translate.PartType // PartText, PartThinking or PartToolCall
	deltas    []string
	signature string // thinking signature
	callID    string // tool call id
	name      string // tool name
	// server is the call or result of a server tool block (kind
	// PartServerToolCall or PartServerToolResult), which goes out whole.
	server *translate.ServerToolUse
	// cites are the citations of a text block, streamed after its text.
	cites []translate.Citation
}

func (b *block) text() string { return strings.Join(b.deltas, "") }

// fault is a failure a scenario injects after the first faultAfter text
// deltas of its answer.
type fault uint8

const (
	faultNone       fault = iota
	faultError            // an in-stream overloaded error event ends the stream
	faultCut              // the connection is aborted
	faultMalformed        // an unparsable event, then the rest of the answer
	faultRawEvent         // the reply's faultEvent, written as it is, ends the stream
	faultEarlyError       // the overloaded error event right after the stream's start, before any content
)

// faultAfter is the number of text deltas delivered before a fault.
const faultAfter = 2

// malformedEvent is the garbage event of the stream_malformed scenario.
var malformedEvent = []byte("data: {not json\n\n")

// words splits text into deltas at spaces, each delta but the first
// starting with its space, the way models stream words.
func words(text string) []string {
	var out []string
	start := 0
	for i := 1; i < len(text); i++ {
		if text[i] == ' ' {
			out = append(out, text[start:i])
			start = i
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// fragments splits tool arguments into up to three pieces, cutting only at
// UTF-8 character starts, so streams carry them as real fragments.
func fragments(args string) []string {
	if len(args) < 6 {
		return []string{args}
	}
	size := (len(args) + 2) / 3
	var out []string
	for len(args) > 0 {
		n := min(size, len(args))
		for n < len(args) && !utf8.RuneStart(args[n]) {
			n++
		}
		out = append(out, args[:n])
		args = args[n:]
	}
	return out
}

// response is the reply as a complete response.
func (r *reply) response(id, model string, inputTokens int) *translate.Response {
	resp := &translate.Response{ID: id, Model: model, StopReason: r.stop}
	out, reasoning := 0, 0
	for i := range r.blocks {
		b := &r.blocks[i]
		text := b.text()
		out += len(text)
		switch b.kind {
		case translate.PartToolCall:
			resp.Parts = append(resp.Parts, translate.Part{Type: translate.PartToolCall,
				ToolCall: &translate.ToolCall{ID: b.callID, Name: b.name, Arguments: text}})
		case translate.PartThinking:
			reasoning += len(text)
			resp.Parts = append(resp.Parts, translate.Part{Type: translate.PartThinking, Text: text, Signature: b.signature})
		case translate.PartServerToolCall, translate.PartServerToolResult:
			resp.Parts = append(resp.Parts, translate.Part{Type: b.kind, Server: b.server})
		default:
			resp.Parts = append(resp.Parts, translate.Part{Type: translate.PartText, Text: text, Citations: b.cites})
		}
	}
	// Token counts are estimates (4 bytes a token), never zero, so clients
	// and proxies that account usage always see some.
	resp.Usage = translate.Usage{InputTokens: max(1, inputTokens), OutputTokens: max(1, out/4), ReasoningTokens: reasoning / 4}
	return resp
}

// stepKind says what a stream step does.
type stepKind uint8

const (
	stepEvent stepKind = iota // encode ev with the protocol's stream encoder
	stepRaw                   // write raw as it is
	stepAbort                 // abort the connection
)

// step is one action of a streamed answer.
type step struct {
	kind stepKind
	ev   translate.Event
	raw  []byte
}

// streamScript is the reply as the sequence of stream steps that delivers
// resp: one IR event per delta, built with translate.Emitter so the stream
// is well formed, with the reply's fault injected after faultAfter text
// deltas. overloaded is the error of faultError.
func (r *reply) streamScript(resp *translate.Response, overloaded *translate.Error) []step {
	var (
		e     translate.Emitter
		evs   []translate.Event
		steps []step
	)
	push := func() {
		for _, ev := range evs {
			steps = append(steps, step{kind: stepEvent, ev: ev})
		}
		evs = evs[:0]
	}
	evs = e.Start(evs, resp.ID, resp.Model, &translate.Usage{InputTokens: resp.Usage.InputTokens})
	if r.fault == faultEarlyError {
		// The start goes out as a step of its own, as a provider flushes
		// it before it fails: the client has seen the stream begin.
		push()
		evs = e.Fail(evs, overloaded)
		push()
		return steps
	}
	textDeltas := 0
	for i := range r.blocks {
		b := &r.blocks[i]
		switch b.kind {
		case translate.PartText:
			for _, d := range b.deltas {
				evs = e.Text(evs, d)
				textDeltas++
				if textDeltas != faultAfter || r.fault == faultNone {
					continue
				}
				switch r.fault {
				case faultError:
					evs = e.Fail(evs, overloaded)
					push()
					return steps
				case faultCut:
					push()
					return append(steps, step{kind: stepAbort})
				case faultMalformed:
					push()
					steps = append(steps, step{kind: stepRaw, raw: malformedEvent})
				case faultRawEvent:
					push()
					return append(steps, step{kind: stepRaw, raw: r.faultEvent})
				}
			}
			for j := range b.cites {
				evs = e.Cite(evs, &b.cites[j])
			}
		case translate.PartThinking:
			for _, d := range b.deltas {
				evs = e.Thinking(evs, d)
			}
			evs = e.Signature(evs, b.signature)
		case translate.PartToolCall:
			evs = e.ToolStart(evs, b.callID, b.name)
			for _, d := range b.deltas {
				evs = e.ToolArgs(evs, d)
			}
		case translate.PartServerToolCall:
			evs = e.ServerTool(evs, translate.BlockServerToolCall, b.server)
		case translate.PartServerToolResult:
			evs = e.ServerTool(evs, translate.BlockServerToolResult, b.server)
		}
		evs = e.CloseBlock(evs)
		push()
	}
	u := resp.Usage
	evs = e.Stop(evs, resp.StopReason, resp.StopSequence, &u)
	push()
	return steps
}

// failure is the error a faultError reply fails with.
func (r *reply) failure(x *exchange) *translate.Error {
	if r.failErr != nil {
		return r.failErr
	}
	return x.spec.overloaded()
}
