package record

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/louter/louter/dialect"
	"github.com/louter/louter/stream"
	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// Replay runs a recorded exchange through the current translators, with no
// network, the way louter's handler does (caddymodule's serveBackend,
// translateRequest and responseWriter): the recorded client request is
// decoded with the client's codec and encoded for the backend, and the
// recorded backend response — its events in order, or its body — is
// translated for the client. What the replay produced is compared with
// what was recorded: the backend request body, the fields the translation
// dropped, the client's status and body or each of its stream events (a
// semantic JSON comparison ignoring VolatileFields).
//
// What the replay does not reproduce, and so does not compare: headers,
// keep-alives (Anthropic ping events are skipped on both sides), the
// timing of events, timeouts (stream_idle_timeout, first_byte_timeout),
// and secret redaction beyond what the recording already holds.

// Options change how Replay translates.
type Options struct {
	// Codec returns the codec of protocol p; d is the backend's dialect
	// (openai_chat backends; nil for clients). Nil: translate's codecs, as
	// louter provisions them. Tests wrap codecs here to change a
	// translator.
	Codec func(p translate.Protocol, d *translate.Dialect) (translate.Codec, bool)
	// Framing returns how a backend of protocol p counts a request, for
	// the input estimate a translated stream announces (caddymodule
	// passes its protocol rows'). Nil, or a nil answer: tokencount's
	// default, OpenAI's.
	Framing func(p translate.Protocol) *tokencount.Framing
}

// Result is the outcome of replaying one exchange.
type Result struct {
	ID string
	// Skipped says why the exchange could not be replayed ("" if it was).
	Skipped string
	Diffs   []Diff
}

// OK reports whether the exchange replayed with no difference.
func (r Result) OK() bool { return r.Skipped == "" && len(r.Diffs) == 0 }

// defaultCodec is louter's choice of codec (caddymodule's Provision).
func defaultCodec(p translate.Protocol, d *translate.Dialect) (translate.Codec, bool) {
	if p == translate.ProtocolOpenAIChat && d != nil {
		return translate.NewOpenAIChatCodec(d), true
	}
	return translate.Lookup(p)
}

// Replay replays one exchange.
func Replay(x *Exchange, opt Options) Result {
	res := Result{ID: x.ID}
	codecOf := opt.Codec
	if codecOf == nil {
		codecOf = defaultCodec
	}
	switch {
	case x.Truncated:
		res.Skipped = "the recording was truncated (max_exchange_size)"
		return res
	case x.ClientRequest == nil || x.Backend == nil || x.BackendRequest == nil:
		res.Skipped = "no backend was asked"
		return res
	}
	client, ok := codecOf(x.Client.Protocol, nil)
	if !ok {
		res.Skipped = fmt.Sprintf("unknown client protocol %q", x.Client.Protocol)
		return res
	}
	b := x.Backend
	dialect := b.Dialect
	backend, ok := codecOf(b.Protocol, dialect)
	if !ok {
		res.Skipped = fmt.Sprintf("unknown backend protocol %q", b.Protocol)
		return res
	}
	r := replayer{x: x, client: client, backend: backend}
	if opt.Framing != nil {
		r.framing = opt.Framing(b.Protocol)
	}
	if b.Passthrough {
		r.passthrough()
	} else if !r.translateRequest() {
		return Result{ID: x.ID, Diffs: r.diffs}
	}
	if x.BackendResponse != nil && x.ClientResponse != nil {
		r.response()
	}
	res.Diffs = r.diffs
	return res
}

type replayer struct {
	x               *Exchange
	client, backend translate.Codec
	framing         *tokencount.Framing // the backend's
	clientReq       *translate.Request
	diffs           []Diff
}

func (r *replayer) fail(part, msg string) {
	r.diffs = append(r.diffs, Diff{Part: part, Path: "$", Want: "(recorded)", Got: msg})
}

// translateRequest does what the handler's translateRequest does and
// compares the result with the recorded backend request.
func (r *replayer) translateRequest() bool {
	x, b := r.x, r.x.Backend
	ir, err := r.client.DecodeRequest(x.ClientRequest.BodyBytes())
	if err != nil {
		r.fail("client_request", "cannot be decoded: "+err.Error())
		return false
	}
	if x.Client.Protocol == translate.ProtocolGemini {
		ir.Stream = x.Stream // Gemini says in the URL, not the body
	}
	clientModel := ir.Model
	if clientModel == "" {
		clientModel = b.Model
	}
	ir.Model = cmp(b.BackendModel, b.Model)
	if b.MaxTokens > 0 && (ir.MaxTokens == 0 || ir.MaxTokens > b.MaxTokens) {
		ir.MaxTokens = b.MaxTokens
	}
	enc := translate.WithBackendToolNames(ir, translate.ToolNaming(b.Protocol, b.Dialect))
	out, err := r.backend.EncodeRequest(enc)
	if err != nil {
		r.fail("backend_request", "cannot be encoded: "+err.Error())
		return false
	}
	r.diffs = diffJSON(r.diffs, "backend_request", x.BackendRequest.BodyBytes(), out)
	if !slices.Equal(x.Dropped, enc.Dropped) {
		r.diffs = append(r.diffs, Diff{Part: "dropped", Path: "$", Want: render(x.Dropped), Got: render(enc.Dropped)})
	}
	clientReq := *ir
	clientReq.Model = clientModel
	clientReq.Dropped = enc.Dropped
	if ir.Stream && earlyUsage(x.Client.Protocol) && lateUsage(b.Protocol) {
		clientReq.InputTokensEstimate = tokencount.Quick(ir, r.framing) // caddymodule/usage_estimate.go
	}
	r.clientReq = &clientReq
	return true
}

func earlyUsage(p translate.Protocol) bool {
	return p == translate.ProtocolAnthropic || p == translate.ProtocolGemini
}

func lateUsage(p translate.Protocol) bool {
	return p == translate.ProtocolOpenAIChat || p == translate.ProtocolOpenAIResponses
}

// cmp returns the first non-empty string.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// passthrough compares the backend request of a same-protocol exchange
// with the client's body after the model rename and the max_tokens cap
// (caddymodule's passthroughBody).
func (r *replayer) passthrough() {
	x, b := r.x, r.x.Backend
	body := bytes.Clone(x.ClientRequest.BodyBytes())
	var err error
	if bm := cmp(b.BackendModel, b.Model); bm != b.Model && x.Client.Protocol != translate.ProtocolGemini {
		if body, err = sjson.SetBytes(body, "model", bm); err != nil {
			r.fail("backend_request", err.Error())
			return
		}
	}
	if r.askedUsage() {
		if body, err = sjson.SetBytes(body, "stream_options.include_usage", true); err != nil {
			r.fail("backend_request", err.Error())
			return
		}
	}
	if b.MaxTokens > 0 {
		for _, key := range [...]string{"max_tokens", "max_completion_tokens", "max_output_tokens", "generationConfig.maxOutputTokens"} {
			if v := gjson.GetBytes(body, key); v.Type == gjson.Number && v.Int() > int64(b.MaxTokens) {
				body, _ = sjson.SetBytes(body, key, b.MaxTokens)
			}
		}
	}
	r.diffs = diffJSON(r.diffs, "backend_request", x.BackendRequest.BodyBytes(), body)
}

// askedUsage reports whether louter asked a passthrough OpenAI Chat stream
// for its usage on its own (a limit or a price applied): the backend
// request asks for it, the client's does not. The client then did not get
// the usage chunk.
func (r *replayer) askedUsage() bool {
	const key = "stream_options.include_usage"
	return r.x.Client.Protocol == translate.ProtocolOpenAIChat &&
		gjson.GetBytes(r.x.BackendRequest.BodyBytes(), key).Type == gjson.True &&
		gjson.GetBytes(r.x.ClientRequest.BodyBytes(), key).Type != gjson.True
}

// response translates the recorded backend response and compares it with
// the recorded client response.
func (r *replayer) response() {
	x := r.x
	br, cr := x.BackendResponse, x.ClientResponse
	if x.Backend.Passthrough {
		// The bytes went through: the client got the backend's events or
		// body; a stream went through the passthrough watcher, which ends
		// a broken one with an error event.
		r.compareStatus(br.Status)
		if len(br.Events) > 0 || len(cr.Events) > 0 {
			r.compareEvents(r.passStream())
		} else {
			r.diffs = diffJSON(r.diffs, "client_response.body", cr.BodyBytes(), br.BodyBytes())
		}
		return
	}
	status, body, events := r.translateResponse()
	r.compareStatus(status)
	if events != nil {
		r.compareEvents(events)
		return
	}
	r.diffs = diffJSON(r.diffs, "client_response.body", cr.BodyBytes(), body)
}

func (r *replayer) compareStatus(got int) {
	if want := r.x.ClientResponse.Status; want != got {
		r.diffs = append(r.diffs, Diff{Part: "client_response.status", Path: "$", Want: strconv.Itoa(want), Got: strconv.Itoa(got)})
	}
}

// passStream runs the backend's events through the passthrough watcher
// as the response writer's modePassSSE does, and returns the client's
// events.
func (r *replayer) passStream() []Event {
	x := r.x
	w := stream.NewPassWatcher(x.Client.Protocol, false)
	if r.askedUsage() {
		w.HideUsageOnly()
	}
	enc := r.client.NewStreamEncoder(&translate.Request{Model: x.Backend.Model, Stream: true})
	var all, frame []byte
	for i := range x.BackendResponse.Events {
		e := &x.BackendResponse.Events[i]
		frame = stream.AppendSSE(frame[:0], e.Name, e.Payload())
		all = append(all, w.Write(frame)...)
		if f := w.Failure(); f != nil {
			return r.events(append(all, w.End(enc, f)...))
		}
	}
	if x.Error == ErrBackendCut {
		if !w.Done() {
			all = append(all, w.End(enc, errMidStream)...)
		}
		return r.events(all)
	}
	tail, e := w.Close()
	all = append(all, tail...)
	if e != nil {
		all = append(all, w.End(enc, e)...)
	}
	return r.events(all)
}

// ErrBackendCut is Exchange.Error when the backend's connection broke
// mid-response; the replay ends the response as louter's handler does.
const ErrBackendCut = "the backend connection failed mid-response"

// The errors louter's handler ends a response with when the backend's
// connection broke (caddymodule's responseWriter.abort).
var (
	errMidStream  = &translate.Error{Status: http.StatusBadGateway, Kind: translate.ErrAPI, Message: "upstream connection failed mid-stream"}
	errIncomplete = &translate.Error{Status: http.StatusBadGateway, Kind: translate.ErrAPI, Message: "upstream connection failed before the response was complete"}
)

// translateResponse returns the client's status and either its body or
// its stream events.
func (r *replayer) translateResponse() (int, []byte, []Event) {
	br, cr := r.x.BackendResponse, r.x.ClientResponse
	req := r.clientReq
	if br.Status >= 300 {
		e := r.backend.DecodeError(br.Status, br.BodyBytes())
		if br.Status < 400 {
			e = translate.NewError(http.StatusBadGateway, "louter: the backend answered with status "+strconv.Itoa(br.Status))
		}
		return r.errorAnswer(e)
	}
	cfg := dialect.DialectConfig{Dialect: translate.ToolNaming(r.x.Backend.Protocol, r.x.Backend.Dialect), Request: req}
	// A Gemini client without alt=sse gets its stream as a JSON array,
	// recorded whole as the body.
	jsonArray := req.Stream && len(cr.Events) == 0 && cr.Status < 300
	var out stream.Output = &stream.SSEOutput{}
	if jsonArray {
		out = &stream.JSONArrayOutput{}
	}
	if len(br.Events) > 0 || isEventStream(first(br.Header["Content-Type"])) {
		dec := dialect.NewDialectDecoder(r.backend.NewStreamDecoder(), cfg)
		if !req.Stream {
			var acc translate.Accumulator
			tc := stream.NewTranscoder(&stream.SSEParser{}, dec, discard{}, out)
			tc.Observe = acc.Add
			r.feed(tc)
			resp, e := acc.Result()
			if e != nil {
				return r.errorAnswer(e)
			}
			return r.encodeResponse(resp)
		}
		tc := stream.NewTranscoder(&stream.SSEParser{}, dec, r.client.NewStreamEncoder(req), out)
		var all []byte
		all = append(all, r.feed(tc)...)
		return r.streamAnswer(all, jsonArray)
	}
	if r.x.Error == ErrBackendCut {
		return r.errorAnswer(errIncomplete) // a buffered answer cut short
	}
	resp, err := r.backend.DecodeResponse(br.BodyBytes())
	if err != nil {
		return r.errorAnswer(translate.NewError(http.StatusBadGateway, "louter: the backend's response cannot be decoded: "+err.Error()))
	}
	resp = dialect.DialectResponse(resp, cfg)
	if !req.Stream {
		return r.encodeResponse(resp)
	}
	enc := r.client.NewStreamEncoder(req)
	events := translate.ResponseEvents(nil, resp)
	for i := range events {
		enc.Encode(out, &events[i])
	}
	stream.EndOutput(out)
	return r.streamAnswer(out.Bytes(), jsonArray)
}

// feed writes the recorded backend events through tc and returns all the
// client bytes it produced. A backend connection that broke mid-stream
// (the recorded error) ends the stream as the handler's abort does.
func (r *replayer) feed(tc *stream.Transcoder) []byte {
	var all, frame []byte
	for i := range r.x.BackendResponse.Events {
		e := &r.x.BackendResponse.Events[i]
		frame = stream.AppendSSE(frame[:0], e.Name, e.Payload())
		all = append(all, tc.Write(frame)...)
	}
	if r.x.Error == ErrBackendCut {
		return append(all, tc.Fail(errMidStream)...)
	}
	return append(all, tc.Close()...)
}

func (r *replayer) errorAnswer(e *translate.Error) (int, []byte, []Event) {
	return translate.ClientStatus(r.client.Protocol(), e), r.client.EncodeError(e), nil
}

func (r *replayer) encodeResponse(resp *translate.Response) (int, []byte, []Event) {
	body, err := r.client.EncodeResponse(resp, r.clientReq)
	if err != nil {
		return r.errorAnswer(translate.NewError(http.StatusBadGateway, "louter: the backend's response cannot be translated: "+err.Error()))
	}
	return http.StatusOK, body, nil
}

// streamAnswer splits the client bytes of a stream into events, or
// returns a JSON array whole.
func (r *replayer) streamAnswer(b []byte, jsonArray bool) (int, []byte, []Event) {
	if jsonArray {
		return http.StatusOK, b, nil
	}
	return http.StatusOK, nil, r.events(b)
}

// events splits SSE bytes into events.
func (r *replayer) events(b []byte) []Event {
	events := []Event{}
	p := &stream.SSEParser{}
	collect := func(name string, data []byte) {
		events = append(events, Event{Name: name, Text: string(data)})
	}
	_ = p.Feed(b, collect)
	_ = p.Close(collect)
	return events
}

// compareEvents compares the recorded client events with got, event by
// event; keep-alive pings are skipped on both sides.
func (r *replayer) compareEvents(got []Event) {
	want := withoutPings(r.x.ClientResponse.Events)
	got = withoutPings(got)
	reported := 0
	for i := 0; i < max(len(want), len(got)) && reported < maxDiffs; i++ {
		part := "client_response.events[" + strconv.Itoa(i) + "]"
		switch {
		case i >= len(want):
			r.diffs = append(r.diffs, Diff{Part: part, Path: "$", Want: "(none)", Got: short(eventString(&got[i]))})
		case i >= len(got):
			r.diffs = append(r.diffs, Diff{Part: part, Path: "$", Want: short(eventString(&want[i])), Got: "(none)"})
		default:
			n := len(r.diffs)
			if want[i].Name != got[i].Name {
				r.diffs = append(r.diffs, Diff{Part: part, Path: "event", Want: want[i].Name, Got: got[i].Name})
			}
			r.diffs = diffJSON(r.diffs, part, want[i].Payload(), got[i].Payload())
			if len(r.diffs) == n {
				continue
			}
		}
		reported++
	}
	if len(want) != len(got) {
		r.diffs = append(r.diffs, Diff{Part: "client_response.events", Path: "length", Want: strconv.Itoa(len(want)), Got: strconv.Itoa(len(got))})
	}
}

func eventString(e *Event) string {
	if e.Name == "" {
		return string(e.Payload())
	}
	return e.Name + " " + string(e.Payload())
}

// withoutPings drops Anthropic's keep-alive events, which depend on time.
func withoutPings(events []Event) []Event {
	out := make([]Event, 0, len(events))
	for _, e := range events {
		if e.Name == "ping" {
			continue
		}
		out = append(out, e)
	}
	return out
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// discard is the stream encoder of an accumulating transcoder.
type discard struct{}

func (discard) Encode(translate.FrameWriter, *translate.Event) {}
