package translate

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestGeminiStreamHoldsLastThought: the encoder holds one thought delta
// back so that a signature arriving alone after it goes out on a part with
// text, which the genai SDKs' chats keep; whatever comes next lets the
// held delta go first, and no chunk goes out with no parts.
func TestGeminiStreamHoldsLastThought(t *testing.T) {
	think := func(text, sig string) Event {
		return Event{Type: EventBlockDelta, Block: BlockThinking, Text: text, Signature: sig}
	}
	var (
		start     = Event{Type: EventMessageStart, ID: "msg_1"}
		openThink = Event{Type: EventBlockStart, Block: BlockThinking}
		stopThink = Event{Type: EventBlockStop, Block: BlockThinking}
		openText  = Event{Type: EventBlockStart, Index: 1, Block: BlockText}
		text      = Event{Type: EventBlockDelta, Index: 1, Block: BlockText, Text: "Hi."}
		stop      = Event{Type: EventMessageStop, Stop: StopEndTurn}
		fail      = Event{Type: EventError, Err: &Error{Status: 529, Kind: ErrOverloaded, Message: "overloaded"}}
	)
	const (
		last  = `[{"text":""}]`
		hiOut = `[{"text":"Hi."}]`
	)
	for _, tt := range []struct {
		name string
		evs  []Event
		want []string // each chunk's parts; "error" for an error chunk
	}{
		{
			name: "signature after the text",
			evs:  []Event{start, openThink, think("Let me ", ""), think("", ""), think("think.", ""), think("", "U2ln"), stopThink, openText, text, stop},
			want: []string{
				`[{"text":"Let me ","thought":true}]`,
				`[{"text":"think.","thought":true,"thoughtSignature":"U2ln"}]`,
				hiOut, last,
			},
		},
		{
			name: "text and signature in one delta",
			evs:  []Event{start, think("a", ""), think("b", "U2ln"), stop},
			want: []string{`[{"text":"a","thought":true}]`, `[{"text":"b","thought":true,"thoughtSignature":"U2ln"}]`, last},
		},
		{
			name: "a signature that signs no text",
			evs:  []Event{start, openThink, think("", "U2ln"), stopThink, stop},
			want: []string{`[{"text":"","thought":true,"thoughtSignature":"U2ln"}]`, last},
		},
		{
			name: "unsigned thought before the answer",
			evs:  []Event{start, think("hmm", ""), openText, text, stop},
			want: []string{`[{"text":"hmm","thought":true}]`, hiOut, last},
		},
		{
			name: "a signature Gemini cannot hold",
			evs:  []Event{start, think("hmm", ""), think("", "not base64!"), stop},
			want: []string{`[{"text":"hmm","thought":true}]`, last},
		},
		{
			name: "the stream fails while a thought is held",
			evs:  []Event{start, think("hmm", ""), fail},
			want: []string{`[{"text":"hmm","thought":true}]`, "error"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var f geminiFrames
			enc := geminiCodec{}.NewStreamEncoder(&Request{Model: "gemini-client"})
			for i := range tt.evs {
				enc.Encode(&f, &tt.evs[i])
			}
			var got []string
			for _, d := range f.data {
				if gjson.GetBytes(d, "error").Exists() {
					got = append(got, "error")
					continue
				}
				got = append(got, gjson.GetBytes(d, "candidates.0.content.parts").Raw)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("chunks' parts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
