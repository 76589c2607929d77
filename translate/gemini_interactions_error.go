package translate

import (
	"fmt"
	"net/http"

	"github.com/tidwall/gjson"
)

// The Interactions API answers errors with {"error":{"code","message"}},
// where code is a string naming the error (not Gemini's numeric
// google.rpc code): invalid_request, authentication, permission_denied,
// not_found, model_not_found, rate_limit_exceeded, ... The genai SDK's
// Interactions client reads exactly that shape, and a numeric code fails
// its schema check. A stream's error event carries the same object:
// {"event_type":"error","error":{"code","message"}}.

// interactionsErrorCode is the code of an error: the upstream's own when
// it already is one of the Interactions API's, else the one its kind
// implies.
func interactionsErrorCode(e *Error) string {
	if interactionsCodes[e.Code] {
		return e.Code
	}
	switch e.Kind {
	case ErrInvalidRequest, ErrRequestTooLarge, ErrContextOverflow:
		return "invalid_request"
	case ErrAuthentication:
		return "authentication"
	case ErrBilling:
		return "payment_required"
	case ErrPermission:
		return "permission_denied"
	case ErrNotFound:
		return "not_found"
	case ErrRateLimit:
		return "rate_limit_exceeded"
	case ErrOverloaded:
		return "unavailable"
	case ErrTimeout:
		return "deadline_exceeded"
	}
	return "internal"
}

// interactionsCodes are the codes the API documents, which an error that
// already carries one keeps.
var interactionsCodes = map[string]bool{
	"invalid_request": true, "failed_precondition": true, "out_of_range": true, "parameter_unknown": true,
	"authentication": true, "payment_required": true, "permission_denied": true, "not_found": true,
	"model_not_found": true, "rate_limit_exceeded": true, "quota_exceeded": true, "cancelled": true,
	"internal": true, "unavailable": true, "deadline_exceeded": true,
}

// interactionsBadRequest is a 400 naming the offending field; the message
// starts with the field's path, so a client that shows only the message
// still learns which field.
func interactionsBadRequest(param, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Kind: ErrInvalidRequest, Code: "invalid_request",
		Param: param, Message: fmt.Sprintf(format, args...)}
}

// interactionsInvalidType is the error for a field of the wrong JSON type.
func interactionsInvalidType(path, want string, v gjson.Result) *Error {
	return interactionsBadRequest(path, "%s: expected %s, got %s", path, want, jsonTypeName(v))
}

// EncodeError implements Codec.
func (interactionsCodec) EncodeError(e *Error) []byte { return interactionsAppendError(nil, e) }

// interactionsAppendError appends {"error":{"code","message"}}.
func interactionsAppendError(b []byte, e *Error) []byte {
	e = e.forClient(ProtocolGeminiInteractions)
	b = append(b, `{"error":`...)
	b = interactionsAppendErrorObject(b, e)
	return append(b, '}')
}

// interactionsAppendErrorObject appends the inner {"code","message"}.
func interactionsAppendErrorObject(b []byte, e *Error) []byte {
	b = append(b, `{"code":`...)
	b = appendJSONString(b, interactionsErrorCode(e))
	b = append(b, `,"message":`...)
	b = appendJSONString(b, e.Message)
	return append(b, '}')
}

// DecodeError implements Codec. It reads the Interactions API's error
// shape, and Gemini's google.rpc envelope (a numeric code and a status
// name) should an Interactions endpoint answer with that. It never fails.
func (interactionsCodec) DecodeError(status int, body []byte) *Error {
	if !gjson.ValidBytes(body) {
		e := NewError(status, http.StatusText(status))
		if msg := oaiSnippetN(body, 2048); msg != "" {
			e.Message = msg
		}
		return e
	}
	obj := gjson.GetBytes(body, "error")
	if code := obj.Get("code"); code.Type != gjson.String {
		return geminiCodec{}.DecodeError(status, body)
	}
	return interactionsErrorFrom(status, obj)
}

// interactionsErrorFrom reads an {"code","message"} object; status 0 means
// the HTTP status is unknown (an error event) and comes from the code.
func interactionsErrorFrom(status int, obj gjson.Result) *Error {
	code := obj.Get("code").Str
	kind, ok := interactionsKinds[code]
	if status < 400 {
		if !ok {
			kind = ErrAPI
		}
		status = StatusForKind(kind)
	} else if !ok {
		kind = KindForStatus(status)
	}
	e := &Error{Status: status, Kind: kind, Code: code, Message: obj.Get("message").Str}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return overflowFrom(e, obj, "")
}

// interactionsKinds maps the documented codes onto error kinds.
var interactionsKinds = map[string]ErrorKind{
	"invalid_request": ErrInvalidRequest, "failed_precondition": ErrInvalidRequest, "out_of_range": ErrInvalidRequest,
	"parameter_unknown": ErrInvalidRequest, "authentication": ErrAuthentication, "payment_required": ErrBilling,
	"permission_denied": ErrPermission, "not_found": ErrNotFound, "model_not_found": ErrNotFound,
	"rate_limit_exceeded": ErrRateLimit, "quota_exceeded": ErrRateLimit, "internal": ErrAPI,
	"unavailable": ErrOverloaded, "deadline_exceeded": ErrTimeout,
}
