package translate

import "net/http"

// ErrorKind is the protocol-neutral class of an error. Each codec maps it to
// its own error type names; the HTTP status is the pivot between protocols.
type ErrorKind string

// Error kinds.
const (
	ErrInvalidRequest  ErrorKind = "invalid_request"
	ErrAuthentication  ErrorKind = "authentication"
	ErrBilling         ErrorKind = "billing"
	ErrPermission      ErrorKind = "permission"
	ErrNotFound        ErrorKind = "not_found"
	ErrRequestTooLarge ErrorKind = "request_too_large"
	ErrRateLimit       ErrorKind = "rate_limit"
	ErrAPI             ErrorKind = "api_error"
	ErrOverloaded      ErrorKind = "overloaded"
	ErrTimeout         ErrorKind = "timeout"
	// ErrContextOverflow is an invalid request whose prompt does not fit
	// the model's context window. Agents react to it by compacting the
	// conversation, so each codec words it as its own provider does
	// (context_overflow.go).
	ErrContextOverflow ErrorKind = "context_overflow"
)

// Error is an error in the IR: an upstream error decoded from any protocol,
// or one louter raises itself.
type Error struct {
	Status  int // HTTP status to answer with
	Kind    ErrorKind
	Message string
	// Code is a protocol-specific code when the upstream gave one
	// (OpenAI "invalid_api_key", Gemini reason "API_KEY_INVALID").
	Code string
	// Param names the offending request field when known.
	Param string
	// PromptTokens and ContextLimit are the prompt's size and the model's
	// context window in tokens, for an ErrContextOverflow; 0 when the
	// upstream did not say.
	PromptTokens, ContextLimit int
}

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

// KindForStatus is the error kind an HTTP status implies.
func KindForStatus(status int) ErrorKind {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusConflict:
		return ErrInvalidRequest
	case http.StatusUnauthorized:
		return ErrAuthentication
	case http.StatusPaymentRequired:
		return ErrBilling
	case http.StatusForbidden:
		return ErrPermission
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusRequestEntityTooLarge:
		return ErrRequestTooLarge
	case http.StatusTooManyRequests:
		return ErrRateLimit
	case 529, http.StatusServiceUnavailable:
		return ErrOverloaded
	case http.StatusGatewayTimeout:
		return ErrTimeout
	}
	if status >= 500 {
		return ErrAPI
	}
	return ErrInvalidRequest
}

// StatusForKind is the HTTP status an error kind implies, for errors that
// arrive without one (in-stream errors).
func StatusForKind(k ErrorKind) int {
	switch k {
	case ErrInvalidRequest, ErrContextOverflow:
		return http.StatusBadRequest
	case ErrAuthentication:
		return http.StatusUnauthorized
	case ErrBilling:
		return http.StatusPaymentRequired
	case ErrPermission:
		return http.StatusForbidden
	case ErrNotFound:
		return http.StatusNotFound
	case ErrRequestTooLarge:
		return http.StatusRequestEntityTooLarge
	case ErrRateLimit:
		return http.StatusTooManyRequests
	case ErrOverloaded:
		return 529
	case ErrTimeout:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// NewError builds an error of the kind the status implies.
func NewError(status int, message string) *Error {
	return &Error{Status: status, Kind: KindForStatus(status), Message: message}
}

// BadRequest is a 400 invalid request error.
func BadRequest(message string) *Error {
	return &Error{Status: http.StatusBadRequest, Kind: ErrInvalidRequest, Message: message}
}
