package translate

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// DecodeError implements Codec. Besides OpenAI's envelope
// {"error":{"message","type","param","code"}} it reads the shapes
// self-hosted servers answer with: {"error":"text"} (Ollama, llama-server
// proxies), {"detail":...} (FastAPI-based servers), {"message":...} and
// vLLM's {"object":"error","message",...}, and plain text. It never fails.
func (openAIChatCodec) DecodeError(status int, body []byte) *Error {
	if gjson.ValidBytes(body) {
		if root := gjson.ParseBytes(body); root.IsObject() {
			return oaiErrorFromBody(status, root)
		}
	}
	e := oaiNewError(status, "", "")
	if msg := oaiSnippetN(body, 2048); msg != "" {
		e.Message = msg
	}
	return overflowFrom(e, gjson.Result{}, "")
}

// oaiErrorFromBody reads an error from a JSON object: a whole error body, or
// an in-stream error chunk. status 0 means the HTTP status is unknown (the
// error arrived inside a 200 stream) and is derived from the error itself.
func oaiErrorFromBody(status int, root gjson.Result) *Error {
	obj := root
	if e := root.Get("error"); e.IsObject() {
		obj = e
	}
	var msg string
	switch e := root.Get("error"); {
	case e.IsObject():
		msg = obj.Get("message").Str
	case e.Type == gjson.String:
		msg = e.Str
	}
	if msg == "" {
		switch d := root.Get("detail"); {
		case d.Type == gjson.String:
			msg = d.Str
		case d.Exists() && d.Type != gjson.Null:
			msg = d.Raw // FastAPI validation errors: a list of objects
		}
	}
	if msg == "" {
		msg = root.Get("message").Str
	}
	if msg == "" {
		msg = oaiSnippetN([]byte(root.Raw), 2048)
	}

	typ := obj.Get("type").Str
	code := obj.Get("code")
	if status == 0 {
		// llama-server and vLLM put the HTTP status in code.
		if code.Type == gjson.Number && code.Int() >= 400 && code.Int() <= 599 {
			status = int(code.Int())
		}
	}
	var codeStr string
	if code.Type == gjson.String {
		codeStr = code.Str
	}
	e := oaiNewError(status, typ, codeStr)
	e.Message = msg
	if p := obj.Get("param"); p.Type == gjson.String {
		e.Param = p.Str
	}
	return overflowFrom(e, obj, typ)
}

// oaiNewError builds an error from an HTTP status (0 if unknown) and the
// OpenAI type and code strings, which refine the kind the status implies.
func oaiNewError(status int, typ, code string) *Error {
	kind := ErrAPI
	if status >= 400 {
		kind = KindForStatus(status)
	}
	refined, known := oaiKindForType(typ, code)
	switch {
	case known && status < 400:
		kind = refined
	case refined == ErrBilling:
		// OpenAI answers an exhausted quota with 429, like a rate limit.
		kind = ErrBilling
	}
	if status < 400 {
		status = StatusForKind(kind)
	}
	e := &Error{Status: status, Kind: kind, Code: code}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return e
}

// oaiKindForType maps the type and code strings of OpenAI and of the
// compatible servers onto an error kind.
func oaiKindForType(typ, code string) (ErrorKind, bool) {
	for _, s := range [...]string{code, typ} {
		switch s {
		case "insufficient_quota", "billing_error":
			return ErrBilling, true
		case "invalid_api_key", "authentication_error", "AuthenticationError":
			return ErrAuthentication, true
		case "model_not_found", "not_found_error", "NotFoundError":
			return ErrNotFound, true
		case "rate_limit_exceeded", "rate_limit_error", "RateLimitError":
			return ErrRateLimit, true
		case "request_too_large":
			return ErrRequestTooLarge, true
		case "permission_error", "permission_denied", "PermissionDeniedError":
			return ErrPermission, true
		case "overloaded", "overloaded_error", "unavailable_error", "ServiceUnavailableError":
			return ErrOverloaded, true
		case "timeout", "timeout_error":
			return ErrTimeout, true
		case "invalid_request_error", "context_length_exceeded", "BadRequestError":
			return ErrInvalidRequest, true
		case "server_error", "api_error", "InternalServerError":
			return ErrAPI, true
		}
	}
	return ErrAPI, false
}

// oaiErrorTypeCode is the OpenAI error type and default code of a kind.
func oaiErrorTypeCode(k ErrorKind) (typ, code string) {
	switch k {
	case ErrInvalidRequest:
		return "invalid_request_error", ""
	case ErrAuthentication:
		return "invalid_request_error", "invalid_api_key"
	case ErrBilling:
		return "insufficient_quota", "insufficient_quota"
	case ErrPermission:
		return "permission_error", ""
	case ErrNotFound:
		return "invalid_request_error", "model_not_found"
	case ErrRequestTooLarge:
		return "invalid_request_error", "request_too_large"
	case ErrRateLimit:
		return "rate_limit_exceeded", "rate_limit_exceeded"
	case ErrOverloaded:
		return "server_error", "overloaded"
	case ErrTimeout:
		return "server_error", "timeout"
	}
	return "server_error", ""
}

// EncodeError implements Codec.
func (openAIChatCodec) EncodeError(e *Error) []byte {
	return oaiAppendError(nil, e)
}

// oaiAppendError appends {"error":{"message","type","param","code"}}. An
// upstream code, when the error carries one, wins over the kind's default.
func oaiAppendError(b []byte, e *Error) []byte {
	e = e.forClient(ProtocolOpenAIChat)
	typ, code := oaiErrorTypeCode(e.Kind)
	if e.Code != "" {
		code = e.Code
	}
	b = append(b, `{"error":{"message":`...)
	b = appendJSONString(b, e.Message)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, typ)
	b = append(b, `,"param":`...)
	b = appendJSONStringOrNull(b, e.Param)
	b = append(b, `,"code":`...)
	b = appendJSONStringOrNull(b, code)
	return append(b, "}}"...)
}

// oaiSnippetN returns the trimmed body, cut to max bytes.
func oaiSnippetN(body []byte, max int) string {
	s := strings.TrimSpace(string(body))
	if len(s) > max {
		for max > 0 && !utf8.RuneStart(s[max]) {
			max--
		}
		s = s[:max] + "…"
	}
	return s
}

// ClientOverflow implements OverflowCodec: OpenAI's wording, which Codex
// and the OpenAI SDKs recognise by its code.
func (openAIChatCodec) ClientOverflow(e *Error) *Error { return overflowOpenAI(e, "messages") }

// OverflowWorded implements OverflowCodec.
func (openAIChatCodec) OverflowWorded(e *Error) bool { return overflowWordedOpenAI(e) }
