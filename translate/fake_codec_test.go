package translate_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// Two protocols that exist only in this test, registered from outside the
// package as a codec of a new protocol would be: testPlain implements
// Codec and nothing else, so every shared code path falls back on its
// documented default; testRich answers every optional interface itself.
// Neither needs a line changed in the package.
//
//	request:  {"model":M,"stream":B,"max_tokens":N,"prompt":S}
//	response: {"text":S,"in":N,"out":N}
//	stream:   event: text {"v"} | stop {"in","out"} | error {"message"}
//	error:    {"error":{"message":S}}
const (
	testPlain translate.Protocol = "test_plain"
	testRich  translate.Protocol = "test_rich"
)

func init() {
	translate.Register(plainCodec{testPlain})
	translate.Register(richCodec{plainCodec{testRich}})
}

type plainCodec struct{ p translate.Protocol }

func (c plainCodec) Protocol() translate.Protocol { return c.p }

func (c plainCodec) DecodeRequest(body []byte) (*translate.Request, error) {
	if !gjson.ValidBytes(body) {
		return nil, translate.BadRequest("test: invalid JSON")
	}
	return &translate.Request{
		Model:     gjson.GetBytes(body, "model").Str,
		Stream:    gjson.GetBytes(body, "stream").Bool(),
		MaxTokens: int(gjson.GetBytes(body, "max_tokens").Int()),
		Messages:  []translate.Message{{Role: translate.RoleUser, Parts: []translate.Part{{Type: translate.PartText, Text: gjson.GetBytes(body, "prompt").Str}}}},
	}, nil
}

func (c plainCodec) EncodeRequest(req *translate.Request) ([]byte, error) {
	var prompt string
	if len(req.Messages) > 0 && len(req.Messages[0].Parts) > 0 {
		prompt = req.Messages[0].Parts[0].Text
	}
	return json.Marshal(map[string]any{"model": req.Model, "stream": req.Stream, "max_tokens": req.MaxTokens, "prompt": prompt})
}

func (c plainCodec) DecodeResponse(body []byte) (*translate.Response, error) {
	if !gjson.ValidBytes(body) {
		return nil, errors.New("test: invalid JSON")
	}
	return &translate.Response{
		Parts:      []translate.Part{{Type: translate.PartText, Text: gjson.GetBytes(body, "text").Str}},
		StopReason: translate.StopEndTurn,
		Usage:      translate.Usage{InputTokens: int(gjson.GetBytes(body, "in").Int()), OutputTokens: int(gjson.GetBytes(body, "out").Int())},
	}, nil
}

func (c plainCodec) EncodeResponse(resp *translate.Response, _ *translate.Request) ([]byte, error) {
	var text string
	for _, p := range resp.Parts {
		text += p.Text
	}
	return json.Marshal(map[string]any{"text": text, "in": resp.Usage.InputTokens, "out": resp.Usage.OutputTokens})
}

func (c plainCodec) NewStreamDecoder() translate.StreamDecoder { return &testStreamDecoder{} }

func (c plainCodec) NewStreamEncoder(*translate.Request) translate.StreamEncoder {
	return testStreamEncoder{}
}

func (c plainCodec) DecodeError(status int, body []byte) *translate.Error {
	e := translate.NewError(status, gjson.GetBytes(body, "error.message").Str)
	if e.Message == "" {
		e.Message = string(body)
	}
	return e
}

func (c plainCodec) EncodeError(e *translate.Error) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": e.Message}})
	return b
}

type testStreamDecoder struct{ started bool }

func (d *testStreamDecoder) Decode(dst []translate.Event, name string, data []byte) []translate.Event {
	if !d.started {
		d.started = true
		dst = append(dst, translate.Event{Type: translate.EventMessageStart})
	}
	switch name {
	case "text":
		dst = append(dst, translate.Event{Type: translate.EventBlockDelta, Block: translate.BlockText, Text: gjson.GetBytes(data, "v").Str})
	case "stop":
		u := translate.Usage{InputTokens: int(gjson.GetBytes(data, "in").Int()), OutputTokens: int(gjson.GetBytes(data, "out").Int())}
		dst = append(dst, translate.Event{Type: translate.EventMessageStop, Stop: translate.StopEndTurn, Usage: &u})
	case "error":
		dst = append(dst, translate.Event{Type: translate.EventError, Err: translate.NewError(http.StatusBadGateway, gjson.GetBytes(data, "message").Str)})
	}
	return dst
}

func (d *testStreamDecoder) End(dst []translate.Event) []translate.Event { return dst }

type testStreamEncoder struct{}

func (testStreamEncoder) Encode(w translate.FrameWriter, ev *translate.Event) {
	switch ev.Type {
	case translate.EventBlockDelta:
		b, _ := json.Marshal(map[string]string{"v": ev.Text})
		w.WriteFrame("text", b)
	case translate.EventMessageStop:
		w.WriteFrame("stop", []byte(`{}`))
	case translate.EventError:
		b, _ := json.Marshal(map[string]string{"message": ev.Err.Message})
		w.WriteFrame("error", b)
	}
}

// richCodec is plainCodec answering every optional interface itself.
type richCodec struct{ plainCodec }

// NewStreamWatch: a stream ends at its "bye" event, and nothing else.
func (richCodec) NewStreamWatch() translate.StreamWatch { return &byeWatch{} }

type byeWatch struct{ done bool }

func (w *byeWatch) Check(name string, _ []byte) translate.WatchVerdict {
	if name == "bye" {
		w.done = true
		return translate.WatchEnd
	}
	return translate.WatchContinue
}
func (w *byeWatch) Complete() bool                        { return w.done }
func (w *byeWatch) Errored() bool                         { return false }
func (w *byeWatch) UsageOnly() bool                       { return false }
func (w *byeWatch) Usage() (translate.Usage, bool)        { return translate.Usage{}, false }
func (w *byeWatch) Resume(enc translate.StreamEncoder)    {}
func (richCodec) TopLevelRules() *translate.TopLevelRules { return &richTopLevel }

var richTopLevel = translate.TopLevelRules{
	ActedOn:   []string{"model", "stream"},
	System:    "sys",
	Messages:  "turns",
	InURL:     true,
	Name:      strings.ToLower,
	Duplicate: func(key string) *translate.Error { return translate.BadRequest("twice: " + key) },
}

func (richCodec) ClientOverflow(e *translate.Error) *translate.Error {
	c := *e
	c.Kind, c.Status, c.Message = translate.ErrInvalidRequest, http.StatusBadRequest, "too long"
	return &c
}
func (richCodec) OverflowWorded(e *translate.Error) bool          { return e.Message == "too long" }
func (richCodec) ClientStatus(status int, _ *translate.Error) int { return status + 1 }
func (richCodec) BackendToolNaming() *translate.Dialect {
	return &translate.Dialect{KeepToolIDs: true, ToolCalls: translate.ToolCallsNative, MaxToolNameLength: 24}
}
func (richCodec) InputUsageEarly() bool   { return true }
func (richCodec) InputUsageAtStart() bool { return true }

// TestTestOnlyProtocolDefaults: a protocol whose codec implements nothing
// but Codec goes through every shared code path on the defaults.
func TestTestOnlyProtocolDefaults(t *testing.T) {
	// The stream watch is its stream decoder.
	w := translate.NewStreamWatch(testPlain)
	if v := w.Check("text", []byte(`{"v":"a"}`)); v != translate.WatchContinue || w.Complete() {
		t.Fatalf("text: %d complete %v", v, w.Complete())
	}
	if v := w.Check("stop", []byte(`{"in":3,"out":1}`)); v != translate.WatchEnd || !w.Complete() || w.Errored() {
		t.Fatalf("stop: %d complete %v errored %v", v, w.Complete(), w.Errored())
	}
	if u, ok := w.Usage(); !ok || u.InputTokens != 3 {
		t.Errorf("usage %+v %v", u, ok)
	}
	w = translate.NewStreamWatch(testPlain)
	if v := w.Check("error", []byte(`{"message":"x"}`)); v != translate.WatchEnd || !w.Errored() {
		t.Errorf("error: %d errored %v", v, w.Errored())
	}

	// The request scan reads the model and the stream member.
	top, e := translate.ScanTopLevel(testPlain, []byte(`{"model":"m","stream":true,"max_tokens":9,"prompt":"p"}`))
	if e != nil || top.Model.Str != "m" || !top.Stream.Bool() || !top.LimitsAt[translate.LimitMaxTokens].Found() || top.ModelInURL || top.UsageOptIn {
		t.Errorf("scan: %+v %v", top, e)
	}
	if _, e := translate.ScanTopLevel(testPlain, []byte(`{"model":"m","model":"n"}`)); e == nil || e.Param != "model" || e.Code != "duplicate_key" {
		t.Errorf("a repeated model: %+v", e)
	}

	if got := translate.ClientStatus(testPlain, &translate.Error{Status: 529, Kind: translate.ErrOverloaded}); got != 529 {
		t.Errorf("status %d", got)
	}
	if !(&translate.Error{Kind: translate.ErrContextOverflow, Code: "context_length_exceeded"}).OverflowWordedFor(testPlain) {
		t.Error("an overflow with OpenAI's code is not worded for a client without wording of its own")
	}
	if d := translate.ToolNaming(testPlain, nil); d.ToolCallFormat() != translate.ToolCallsNative || !d.KeepToolIDs {
		t.Errorf("tool naming %+v", d)
	}
	if c, ok := translate.BackendCodec(testPlain, &translate.Dialect{}); !ok || c != (plainCodec{testPlain}) {
		t.Errorf("backend codec %v %v", c, ok)
	}

	// Requests translate both ways. A client of the test protocol gets no
	// input estimate (its streams report usage at the end); an Anthropic
	// client of a test backend does (the backend's may not report it at
	// its start).
	plain, _ := translate.Lookup(testPlain)
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	count := func(*translate.Request) int { return 42 }
	out, req, err := translate.TranslateRequest([]byte(`{"model":"m","stream":true,"max_tokens":900,"prompt":"hi"}`), nil,
		&translate.RequestRoute{Client: plain, Backend: anth, BackendModel: "claude", MaxTokens: 100, CountInput: count})
	if err != nil || gjson.GetBytes(out, "model").Str != "claude" || gjson.GetBytes(out, "max_tokens").Int() != 100 || req.Model != "m" || req.InputTokensEstimate != 0 {
		t.Errorf("to anthropic: %s %+v %v", out, req, err)
	}
	out, req, err = translate.TranslateRequest([]byte(`{"model":"m","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`), nil,
		&translate.RequestRoute{Client: anth, Backend: plain, BackendModel: "t", CountInput: count})
	if err != nil || gjson.GetBytes(out, "prompt").Str != "hi" || gjson.GetBytes(out, "model").Str != "t" || req.InputTokensEstimate != 42 {
		t.Errorf("from anthropic: %s %+v %v", out, req, err)
	}
}

// TestTestOnlyProtocolOwnAnswers: a protocol whose codec implements the
// optional interfaces is answered by them.
func TestTestOnlyProtocolOwnAnswers(t *testing.T) {
	w := translate.NewStreamWatch(testRich)
	if w.Check("stop", nil) != translate.WatchContinue || w.Check("bye", nil) != translate.WatchEnd || !w.Complete() {
		t.Error("the codec's own watch was not used")
	}

	top, e := translate.ScanTopLevel(testRich, []byte(`{"MODEL":"m","Sys":"s","TURNS":[]}`))
	if e != nil || top.Model.Exists() || !top.ModelInURL || !top.SystemAt.Found() || !top.MessagesAt.Found() {
		t.Errorf("scan: %+v %v", top, e)
	}
	if _, e := translate.ScanTopLevel(testRich, []byte(`{"Stream":1,"STREAM":2}`)); e == nil || e.Message != "twice: stream" {
		t.Errorf("a repeat: %+v", e)
	}

	if got := translate.ClientStatus(testRich, &translate.Error{Status: 500}); got != 501 {
		t.Errorf("status %d", got)
	}
	if !(&translate.Error{Kind: translate.ErrContextOverflow, Message: "too long"}).OverflowWordedFor(testRich) {
		t.Error("the codec's overflow wording was not asked")
	}
	if d := translate.ToolNaming(testRich, nil); d.BackendToolName("a_name_longer_than_twenty_four") == "a_name_longer_than_twenty_four" {
		t.Error("the codec's tool naming was not used")
	}

	// Its streams report the input early and at their start: an estimate
	// for a stream from an OpenAI Chat backend, none from its own kind.
	rich, _ := translate.Lookup(testRich)
	chat, _ := translate.Lookup(translate.ProtocolOpenAIChat)
	count := func(*translate.Request) int { return 42 }
	body := []byte(`{"model":"m","stream":true,"prompt":"hi"}`)
	if _, req, err := translate.TranslateRequest(body, nil, &translate.RequestRoute{Client: rich, Backend: chat, BackendModel: "gpt", CountInput: count}); err != nil || req.InputTokensEstimate != 42 {
		t.Errorf("from openai chat: %+v %v", req, err)
	}
	plain, _ := translate.Lookup(testPlain)
	if _, req, err := translate.TranslateRequest(body, nil, &translate.RequestRoute{Client: plain, Backend: rich, BackendModel: "r", CountInput: count}); err != nil || req.InputTokensEstimate != 0 {
		t.Errorf("to the test protocol: %+v %v", req, err)
	}
}
