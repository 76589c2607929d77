package record

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// Replay runs a recorded exchange through the current translators, with no
// network, through the steps louter's handler takes: the recorded client
// request is translated for the backend by translate.TranslateRequest,
// and the recorded backend response — its events in order, or its body —
// is translated for the client by a stream.Translation, as caddymodule's
// responseWriter does. What the replay produced is compared with
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
	// (nil for clients). Nil: translate.BackendCodec, as louter
	// provisions its backends. Tests wrap codecs here to change a
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

// defaultCodec is louter's choice of codec, as caddymodule's Provision
// makes it.
func defaultCodec(p translate.Protocol, d *translate.Dialect) (translate.Codec, bool) {
	return translate.BackendCodec(p, d)
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
	r.t = stream.Translation{Client: client, Backend: backend, Dialect: dialect}
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
	// t is the response side of the translation; its Request is
	// clientReq once the request is translated.
	t     stream.Translation
	diffs []Diff
}

func (r *replayer) fail(part, msg string) {
	r.diffs = append(r.diffs, Diff{Part: part, Path: "$", Want: "(recorded)", Got: msg})
}

// translateRequest translates the recorded client request as the
// handler's translateRequest does (translate.TranslateRequest) and
// compares the result with the recorded backend request.
func (r *replayer) translateRequest() bool {
	x, b := r.x, r.x.Backend
	ir, err := r.client.DecodeRequest(x.ClientRequest.BodyBytes())
	if err != nil {
		r.fail("client_request", "cannot be decoded: "+err.Error())
		return false
	}
	// The stream mode louter settled on: the body's, or the URL's for a
	// protocol that says it there (Gemini).
	stream := x.Stream
	out, clientReq, err := translate.TranslateRequest(x.ClientRequest.BodyBytes(), ir, &translate.RequestRoute{
		Client: r.client, Backend: r.backend, Dialect: b.Dialect,
		Model: b.Model, BackendModel: cmp(b.BackendModel, b.Model), MaxTokens: b.MaxTokens,
		Stream: &stream, CountInput: func(req *translate.Request) int { return tokencount.Quick(req, r.framing) },
		Edit:           translate.BackendEdit(b.DropSampling, !b.KeepBillingHeader),
		ContextEditing: translate.ContextEditing(b.ContextManagement),
		// A compaction louter made is replayed with the summary the
		// client was answered with: the summary turn is an exchange of
		// its own.
		Summarize:   func(*translate.Request, string) (string, error) { return recordedSummary(x.ClientResponse) },
		ServerTools: b.ServerTools,
	})
	if err != nil {
		r.fail("backend_request", "cannot be encoded: "+err.Error())
		return false
	}
	if b.CacheKeyMember != "" {
		// The key hashes the client's identity, which is not recorded:
		// the recorded value is set where the handler set it.
		if keyed, err := sjson.SetBytes(out, b.CacheKeyMember, b.CacheKey); err == nil {
			out = keyed
		}
	}
	r.diffs = diffJSON(r.diffs, "backend_request", x.BackendRequest.BodyBytes(), out)
	if !slices.Equal(x.Dropped, clientReq.Dropped) {
		r.diffs = append(r.diffs, Diff{Part: "dropped", Path: "$", Want: render(x.Dropped), Got: render(clientReq.Dropped)})
	}
	clientReq.PreviousResponseID, clientReq.Stored = recordedState(x.ClientResponse)
	r.clientReq, r.t.Request = clientReq, clientReq
	return true
}

// recordedState is what a Responses client's recorded answer echoes of
// louter's stored responses (translate.Request's PreviousResponseID and
// Stored): a replay has no store, so it takes them from the recording.
// Other answers have neither member: "", false.
func recordedState(resp *Response) (prev string, stored bool) {
	if resp == nil {
		return "", false
	}
	// The body, or a stream's last response object: in a passthrough
	// only an event louter wrote itself (an error's end) is its own.
	obj := gjson.GetBytes(resp.BodyBytes(), "@this")
	for i := len(resp.Events) - 1; i >= 0 && !obj.Get("object").Exists(); i-- {
		obj = gjson.GetBytes(resp.Events[i].Payload(), "response")
	}
	return obj.Get("previous_response_id").Str, obj.Get("store").Bool()
}

// recordedSummary is the summary of the compaction block an Anthropic
// client's recorded answer starts with (translate.ContextManagement's
// Compacted): the first content block of a JSON answer, a stream's
// compaction_delta.
func recordedSummary(resp *Response) (string, error) {
	if resp != nil {
		if b := gjson.GetBytes(resp.BodyBytes(), "content.0"); b.Get("type").Str == "compaction" {
			return b.Get("content").Str, nil
		}
		for i := range resp.Events {
			if d := gjson.GetBytes(resp.Events[i].Payload(), "delta"); d.Get("type").Str == "compaction_delta" {
				return d.Get("content").Str, nil
			}
		}
	}
	return "", fmt.Errorf("the recorded answer has no compaction block")
}

// cmp returns the first non-empty string.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// passthrough compares the backend request of a same-protocol exchange
// with the client's body edited as the handler edits it
// (translate.PassthroughBody): the model rename, the max_tokens cap, and
// the request for a stream's usage when louter asked for it.
func (r *replayer) passthrough() {
	x, b := r.x, r.x.Backend
	body := x.ClientRequest.BodyBytes()
	top, te := translate.ScanTopLevel(x.Client.Protocol, body)
	if te != nil {
		r.fail("client_request", "cannot be scanned: "+te.Error())
		return
	}
	backendModel := cmp(b.BackendModel, b.Model)
	if top.ModelInURL {
		backendModel = b.Model // renamed in the URL, not in the body
	}
	out, _, te := translate.PassthroughBody(body, &top, b.Model, backendModel, b.MaxTokens, r.askedUsage())
	if te != nil {
		r.fail("backend_request", te.Error())
		return
	}
	if b.DropSampling {
		// Only an Anthropic backend refuses them (Backend.DropSampling).
		out, _ = translate.DropAnthropicSampling(out)
	}
	r.diffs = diffJSON(r.diffs, "backend_request", x.BackendRequest.BodyBytes(), out)
}

// askedUsage reports whether louter asked a passthrough stream for its
// usage on its own (a limit or a price applied, and the protocol reports
// usage only when asked: OpenAI Chat's stream_options.include_usage): the
// backend request asks for it, the client's does not. The client then did
// not get the usage chunk.
func (r *replayer) askedUsage() bool {
	const key = "stream_options.include_usage"
	return gjson.GetBytes(r.x.BackendRequest.BodyBytes(), key).Type == gjson.True &&
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
	req := &translate.Request{Model: x.Backend.Model, Stream: true}
	req.PreviousResponseID, req.Stored = recordedState(x.ClientResponse)
	enc := r.client.NewStreamEncoder(req)
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
		return r.errorAnswer(r.t.DecodeError(br.Status, br.BodyBytes()))
	}
	// A Gemini client without alt=sse gets its stream as a JSON array,
	// recorded whole as the body.
	jsonArray := req.Stream && len(cr.Events) == 0 && cr.Status < 300
	var out stream.Output = &stream.SSEOutput{}
	if jsonArray {
		out = &stream.JSONArrayOutput{}
	}
	if len(br.Events) > 0 || isEventStream(first(br.Header["Content-Type"])) {
		if !req.Stream {
			var acc translate.Accumulator
			tc := r.t.NewEventTranscoder(out)
			tc.Observe = acc.Add
			r.feed(tc)
			resp, e := acc.Result()
			if e != nil {
				return r.errorAnswer(e)
			}
			return r.encodeResponse(resp)
		}
		return r.streamAnswer(r.feed(r.t.NewStreamTranscoder(out)), jsonArray)
	}
	if r.x.Error == ErrBackendCut {
		return r.errorAnswer(errIncomplete) // a buffered answer cut short
	}
	resp, err := r.t.DecodeResponse(br.BodyBytes())
	if err != nil {
		return r.errorAnswer(stream.BadResponse(err))
	}
	if !req.Stream {
		return r.encodeResponse(resp)
	}
	r.t.EncodeStream(out, resp)
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
	status, body := r.t.ErrorAnswer(e)
	return status, body, nil
}

func (r *replayer) encodeResponse(resp *translate.Response) (int, []byte, []Event) {
	body, err := r.t.EncodeResponse(resp)
	if err != nil {
		return r.errorAnswer(stream.UntranslatableResponse(err))
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
