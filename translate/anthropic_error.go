package translate

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// anthErrorTypes maps each error kind to Anthropic's error.type
// (REFERENCE §1.7).
var anthErrorTypes = map[ErrorKind]string{
	ErrInvalidRequest:  "invalid_request_error",
	ErrAuthentication:  "authentication_error",
	ErrBilling:         "billing_error",
	ErrPermission:      "permission_error",
	ErrNotFound:        "not_found_error",
	ErrRequestTooLarge: "request_too_large",
	ErrRateLimit:       "rate_limit_error",
	ErrAPI:             "api_error",
	ErrOverloaded:      "overloaded_error",
	ErrTimeout:         "timeout_error",
}

// anthErrorKinds is the reverse of anthErrorTypes.
var anthErrorKinds = func() map[string]ErrorKind {
	m := make(map[string]ErrorKind, len(anthErrorTypes))
	for k, t := range anthErrorTypes {
		m[t] = k
	}
	return m
}()

// anthMaxErrorMessage bounds a message taken from an unparsable error body:
// an HTML error page from a load balancer should not end up whole in the
// client's error.
const anthMaxErrorMessage = 1024

// DecodeError implements Codec. It reads Anthropic's envelope
// {"type":"error","error":{"type","message"}}, and tolerates what servers
// that merely claim Anthropic compatibility send instead: OpenAI's
// {"error":{"message","type","code"}}, {"error":"…"}, {"message":"…"},
// {"detail":"…"} and plain text.
func (anthropicCodec) DecodeError(status int, body []byte) *Error {
	e := &Error{Status: status}
	body = bytes.TrimSpace(body)
	var typ string
	var errv gjson.Result
	if gjson.ValidBytes(body) {
		root := gjson.ParseBytes(body)
		errv = root.Get("error")
		switch {
		case errv.IsObject():
			// error.type names a kind only in Anthropic's own envelope:
			// OpenAI uses invalid_request_error for a 401 too.
			if root.Get("type").Str == "error" || status < 400 {
				typ = errv.Get("type").String()
			}
			e.Message = errv.Get("message").String()
			if c := errv.Get("code"); c.Exists() && c.Type != gjson.Null {
				e.Code = c.String()
			}
			if p := errv.Get("param"); p.Type == gjson.String {
				e.Param = p.String()
			}
		case errv.Type == gjson.String:
			e.Message = errv.String()
		}
		if e.Message == "" {
			for _, key := range [...]string{"message", "detail", "error_description"} {
				if v := root.Get(key); v.Type == gjson.String && v.String() != "" {
					e.Message = v.String()
					break
				}
			}
		}
		if e.Message == "" {
			// A shape we do not understand: its text is the best
			// description there is.
			e.Message = anthTruncate(string(body))
		}
	} else if len(body) > 0 {
		e.Message = anthTruncate(string(body))
	}
	if kind, ok := anthErrorKinds[typ]; ok {
		e.Kind = kind
	} else if status >= 400 {
		e.Kind = KindForStatus(status)
	} else {
		// An in-stream error or an error envelope with a success status,
		// of a type we do not know.
		e.Kind = ErrAPI
	}
	if e.Status < 400 {
		// A caller that lost the status (or a 200 carrying an error body).
		e.Status = StatusForKind(e.Kind)
	}
	if e.Message == "" {
		e.Message = http.StatusText(e.Status)
		if e.Message == "" {
			e.Message = "upstream error"
		}
	}
	return overflowFrom(e, errv, errv.Get("type").Str)
}

// anthTruncate cuts s to anthMaxErrorMessage bytes on a rune boundary.
func anthTruncate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= anthMaxErrorMessage {
		return s
	}
	cut := anthMaxErrorMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// anthErrorType is the Anthropic error.type for e: by kind, else by status.
func anthErrorType(e *Error) string {
	if t, ok := anthErrorTypes[e.Kind]; ok {
		return t
	}
	return anthErrorTypes[KindForStatus(e.Status)]
}

// appendAnthError appends {"type":"error","error":{"type","message"}}, the
// body of an error response and the data of an in-stream error event.
func appendAnthError(dst []byte, e *Error) []byte {
	e = e.forClient(ProtocolAnthropic)
	dst = append(dst, `{"type":"error","error":{"type":`...)
	dst = appendJSONString(dst, anthErrorType(e))
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, e.Message)
	return append(dst, "}}"...)
}

// EncodeError implements Codec.
func (anthropicCodec) EncodeError(e *Error) []byte {
	if e == nil {
		e = &Error{Status: http.StatusInternalServerError, Kind: ErrAPI, Message: "internal error"}
	}
	return appendAnthError(nil, e)
}

// ClientOverflow implements OverflowCodec: Anthropic reports an overflow as
// an invalid request whose message gives both figures, which Claude Code
// reads to compact the conversation (anthOverflowMessage).
func (anthropicCodec) ClientOverflow(e *Error) *Error {
	c := overflowInvalid(e)
	c.Code, c.Param = "", ""
	c.Message = anthOverflowMessage(e.Message, e.PromptTokens, e.ContextLimit)
	return c
}

// OverflowWorded implements OverflowCodec.
func (anthropicCodec) OverflowWorded(e *Error) bool {
	return strings.HasPrefix(e.Message, "prompt is too long")
}

// anthOverflowMessage is Anthropic's wording, the one Claude Code parses
// (/prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)/). A figure the
// upstream left out is replaced by the bound the other implies: a prompt
// over an M-token window has at least M+1 tokens (also when vLLM counts only
// the input, which fits but leaves no room for max_tokens). With neither known the
// message still starts as Anthropic's, which is what Claude Code tests
// first, and keeps the upstream's words.
func anthOverflowMessage(upstream string, n, m int) string {
	switch {
	case n > m && m > 0:
	case m > 0:
		n = m + 1
	case n > 1:
		m = n - 1
	default:
		if strings.HasPrefix(strings.ToLower(upstream), "prompt is too long") {
			return upstream
		}
		return "prompt is too long: " + upstream
	}
	return "prompt is too long: " + strconv.Itoa(n) + " tokens > " + strconv.Itoa(m) + " maximum"
}
