package translate

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// DecodeError implements Codec. Gemini answers with the google.rpc status
// envelope {"error":{"code","message","status","details":[...]}}
// (REFERENCE §4.6); a streamed JSON array wraps it in [...]. An invalid API
// key is a 400 INVALID_ARGUMENT with the reason API_KEY_INVALID in an
// ErrorInfo detail: it becomes a 401 authentication error, as every other
// protocol reports a bad key. It never fails.
func (geminiCodec) DecodeError(status int, body []byte) *Error {
	if gjson.ValidBytes(body) {
		root := gjson.ParseBytes(body)
		if root.IsArray() {
			root = root.Get("0")
		}
		if root.IsObject() {
			return geminiErrorFromBody(status, root)
		}
	}
	e := geminiNewError(status, "", "")
	if msg := oaiSnippetN(body, 2048); msg != "" {
		e.Message = msg
	}
	return overflowFrom(e, gjson.Result{}, "")
}

// geminiErrorFromBody reads an error envelope; status 0 means the HTTP
// status is unknown (an in-stream error) and comes from the body.
func geminiErrorFromBody(status int, root gjson.Result) *Error {
	obj := root.Get("error")
	if !obj.IsObject() {
		obj = root
	}
	if status == 0 {
		if c := obj.Get("code"); c.Type == gjson.Number && c.Int() >= 400 && c.Int() <= 599 {
			status = int(c.Int())
		}
	}
	var reason string
	obj.Get("details").ForEach(func(_, d gjson.Result) bool {
		if r := d.Get("reason"); r.Type == gjson.String {
			reason = r.Str
			return false
		}
		return true
	})
	e := geminiNewError(status, obj.Get("status").Str, reason)
	if m := obj.Get("message"); m.Type == gjson.String && m.Str != "" {
		e.Message = m.Str
	} else if m := root.Get("error"); m.Type == gjson.String {
		e.Message = m.Str
	}
	return overflowFrom(e, obj, "")
}

// geminiNewError builds an error from the HTTP status (0 if unknown), the
// google.rpc status name and the ErrorInfo reason.
func geminiNewError(status int, name, reason string) *Error {
	kind, known := geminiKindForStatus(name)
	switch {
	case status >= 400 && !known:
		kind = KindForStatus(status)
	case status < 400 && !known:
		kind = ErrAPI
	}
	switch reason {
	case "API_KEY_INVALID", "API_KEY_EXPIRED", "API_KEY_SERVICE_BLOCKED":
		kind, status = ErrAuthentication, http.StatusUnauthorized
	}
	if status < 400 {
		status = StatusForKind(kind)
	}
	code := reason
	if code == "" {
		code = name
	}
	return &Error{Status: status, Kind: kind, Code: code, Message: http.StatusText(status)}
}

// geminiKindForStatus maps a google.rpc status name onto an error kind.
func geminiKindForStatus(name string) (ErrorKind, bool) {
	switch name {
	case "INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE":
		return ErrInvalidRequest, true
	case "UNAUTHENTICATED":
		return ErrAuthentication, true
	case "PERMISSION_DENIED":
		return ErrPermission, true
	case "NOT_FOUND":
		return ErrNotFound, true
	case "RESOURCE_EXHAUSTED":
		return ErrRateLimit, true
	case "INTERNAL", "UNKNOWN", "DATA_LOSS":
		return ErrAPI, true
	case "UNAVAILABLE":
		return ErrOverloaded, true
	case "DEADLINE_EXCEEDED":
		return ErrTimeout, true
	}
	return "", false
}

// geminiStatusName is the google.rpc status name of an error kind.
func geminiStatusName(k ErrorKind) string {
	switch k {
	case ErrInvalidRequest, ErrRequestTooLarge:
		return "INVALID_ARGUMENT"
	case ErrAuthentication:
		return "UNAUTHENTICATED"
	case ErrBilling:
		return "FAILED_PRECONDITION"
	case ErrPermission:
		return "PERMISSION_DENIED"
	case ErrNotFound:
		return "NOT_FOUND"
	case ErrRateLimit:
		return "RESOURCE_EXHAUSTED"
	case ErrOverloaded:
		return "UNAVAILABLE"
	case ErrTimeout:
		return "DEADLINE_EXCEEDED"
	}
	return "INTERNAL"
}

// EncodeError implements Codec.
func (geminiCodec) EncodeError(e *Error) []byte { return geminiAppendError(nil, e) }

// geminiAppendError appends {"error":{"code","message","status"}}; the code
// is the HTTP status the error is answered with (ClientStatus). An invalid
// request that names its field also carries the field in "details".
func geminiAppendError(b []byte, e *Error) []byte {
	e = e.forClient(ProtocolGemini)
	status := ClientStatus(ProtocolGemini, e)
	b = append(b, `{"error":{"code":`...)
	b = appendJSONInt(b, int64(status))
	b = append(b, `,"message":`...)
	b = appendJSONString(b, e.Message)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, geminiStatusName(e.Kind))
	if e.Param != "" && e.Kind == ErrInvalidRequest {
		// Gemini names the offending field in a google.rpc.BadRequest
		// detail, in the snake_case its messages quote.
		b = append(b, `,"details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":`...)
		b = appendJSONString(b, geminiSnake(e.Param))
		b = append(b, `,"description":`...)
		b = appendJSONString(b, e.Message)
		b = append(b, "}]}]"...)
	}
	return append(b, "}}"...)
}

// ClientOverflow implements OverflowCodec: Gemini's own wording, which
// Gemini CLI recognises, when both figures are known; the upstream's
// message otherwise.
func (geminiCodec) ClientOverflow(e *Error) *Error {
	c := overflowInvalid(e)
	c.Code, c.Param = "", ""
	if n, m := e.PromptTokens, e.ContextLimit; n > 0 && m > 0 {
		c.Message = "The input token count (" + strconv.Itoa(n) + ") exceeds the maximum number of tokens allowed (" + strconv.Itoa(m) + ")."
	}
	return c
}

// OverflowWorded implements OverflowCodec.
func (geminiCodec) OverflowWorded(e *Error) bool {
	return strings.Contains(e.Message, "input token count")
}

// ClientStatus implements StatusCodec: Gemini reports an overloaded model
// as 503 UNAVAILABLE, never with Anthropic's 529, and Google's SDKs retry
// on 503 but treat 529 as an unknown failure.
func (geminiCodec) ClientStatus(status int, _ *Error) int {
	if status == 529 {
		return http.StatusServiceUnavailable
	}
	return status
}
