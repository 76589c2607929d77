package mock

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// The mock's Bedrock runtime: POST /model/{modelId}/invoke and
// /invoke-with-response-stream (Claude's Messages body, without model and
// stream), answered in JSON and in the AWS event-stream framing, written
// with the SDK's encoder: each Anthropic stream event base64 in a chunk
// event's "bytes", an error as an exception message. Every request's
// authentication is checked (BedrockAuth, sigv4.go).

// bedrockModelOp splits a Bedrock runtime path into the model id (one
// escaped segment: an ARN's '/' and ':' arrive as %2F and %3A) and the
// operation.
func bedrockModelOp(escapedPath string) (model, op string, ok bool) {
	i := strings.LastIndex(escapedPath, "/model/")
	if i < 0 {
		return "", "", false
	}
	seg, op, ok := strings.Cut(escapedPath[i+len("/model/"):], "/")
	if !ok || seg == "" {
		return "", "", false
	}
	model, err := url.PathUnescape(seg)
	return model, op, err == nil
}

// bedrockOps are the Bedrock operations the mock answers, by their path
// segment, with whether they stream.
var bedrockInvokeOps = map[string]bool{"invoke": false, "invoke-with-response-stream": true}

// bedrockInvokePath is the Bedrock spec's matchPath; path is unescaped,
// so an ARN's '/' is a separator here, and the model is read from the
// escaped path (bedrockModelOp).
func bedrockInvokePath(path string) bool {
	i := strings.Index(path, "/model/")
	if i < 0 {
		return false
	}
	for op := range bedrockInvokeOps {
		if strings.HasSuffix(path[i:], "/"+op) {
			return true
		}
	}
	return false
}

// bedrockInvokeBody puts the URL's model and stream mode into the body,
// which the Anthropic decoder reads them from.
func bedrockInvokeBody(r *http.Request, body []byte) []byte {
	model, op, _ := bedrockModelOp(r.URL.EscapedPath())
	body, _ = sjson.SetBytes(body, "model", model)
	if bedrockInvokeOps[op] {
		body, _ = sjson.SetBytes(body, "stream", true)
	}
	return body
}

// eventStreamOutput frames a stream encoder's events as AWS event-stream
// messages: for Bedrock's invoke stream, each event as a chunk whose
// "bytes" is the event's JSON; for ConverseStream (wrap false), each event
// as the message its name names. An error event becomes an exception
// message named after the error's kind.
type eventStreamOutput struct {
	wrap bool
	buf  bytes.Buffer
	enc  *eventstream.Encoder
}

func newEventStreamOutput(wrap bool) *eventStreamOutput {
	return &eventStreamOutput{wrap: wrap, enc: eventstream.NewEncoder()}
}

// WriteFrame implements translate.FrameWriter.
func (o *eventStreamOutput) WriteFrame(name string, data []byte) {
	var h eventstream.Headers
	h.Set(":content-type", eventstream.StringValue("application/json"))
	payload := data
	switch {
	case name == "error" || strings.HasPrefix(name, translate.AWSExceptionPrefix):
		exc := strings.TrimPrefix(name, translate.AWSExceptionPrefix)
		if name == "error" {
			exc = exceptionFor(gjson.GetBytes(data, "error.type").String())
		}
		msg := gjson.GetBytes(data, "error.message").String()
		if msg == "" {
			msg = gjson.GetBytes(data, "message").String()
		}
		h.Set(":message-type", eventstream.StringValue("exception"))
		h.Set(":exception-type", eventstream.StringValue(exc))
		payload, _ = json.Marshal(map[string]string{"message": msg})
	case o.wrap:
		h.Set(":message-type", eventstream.StringValue("event"))
		h.Set(":event-type", eventstream.StringValue("chunk"))
		payload, _ = json.Marshal(map[string]string{"bytes": base64.StdEncoding.EncodeToString(data), "p": "abcdefghij"[:1+len(data)%10]})
	default:
		h.Set(":message-type", eventstream.StringValue("event"))
		h.Set(":event-type", eventstream.StringValue(name))
	}
	_ = o.enc.Encode(&o.buf, eventstream.Message{Headers: h, Payload: payload})
}

// exceptionFor is the Bedrock stream exception of an Anthropic error type.
func exceptionFor(anthropicType string) string {
	switch anthropicType {
	case "rate_limit_error":
		return "throttlingException"
	case "overloaded_error":
		return "serviceUnavailableException"
	case "invalid_request_error":
		return "validationException"
	}
	return "internalServerException"
}

// Bytes implements stream.Output.
func (o *eventStreamOutput) Bytes() []byte { return o.buf.Bytes() }

// Reset implements stream.Output.
func (o *eventStreamOutput) Reset() { o.buf.Reset() }

var _ stream.Output = (*eventStreamOutput)(nil)

// serveBedrockCount answers Bedrock's CountTokens (POST
// /model/{id}/count-tokens), authenticated like the other Bedrock calls,
// for an InvokeModel body ({"input":{"invokeModel":{"body":base64}}}) or a
// Converse one ({"input":{"converse":{"messages":...}}}): CountBase plus
// the number of messages, as the mock's other counts. It reports whether r
// was such a call.
func (m *Mock) serveBedrockCount(w http.ResponseWriter, r *http.Request) bool {
	if i := strings.Index(r.URL.Path, "/model/"); i < 0 || !strings.HasSuffix(r.URL.Path, "/count-tokens") {
		return false
	}
	body, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	entry := m.journal.record(string(translate.ProtocolBedrock), r, body)
	m.journal.update(entry, func(e *journalEntry) { e.Scenario = "count_tokens" })
	if why := m.Bedrock.check(r, body); why != "" {
		writeStatusJSON(w, http.StatusForbidden, map[string]string{"message": why})
		return true
	}
	in := gjson.GetBytes(body, "input")
	var msgs gjson.Result
	if b64 := in.Get("invokeModel.body"); b64.Exists() {
		raw, err := base64.StdEncoding.DecodeString(b64.Str)
		if err != nil || !gjson.ValidBytes(raw) {
			writeStatusJSON(w, http.StatusBadRequest, map[string]string{"message": "input.invokeModel.body: not base64 JSON"})
			return true
		}
		msgs = gjson.GetBytes(raw, "messages")
	} else {
		msgs = in.Get("converse.messages")
	}
	if !msgs.IsArray() {
		writeStatusJSON(w, http.StatusBadRequest, map[string]string{"message": "input: no messages"})
		return true
	}
	writeStatusJSON(w, http.StatusOK, map[string]int{"inputTokens": CountBase + len(msgs.Array())})
	return true
}
