package translate

import "net/http"

// ClientStatus is the HTTP status a client of protocol p is answered with
// for e. It is e's status (or the one its kind implies) except where the
// client's provider never uses that status for that error: Gemini reports
// an overloaded model as 503 UNAVAILABLE, never with Anthropic's 529, and
// Google's SDKs retry on 503 but treat 529 as an unknown failure.
func ClientStatus(p Protocol, e *Error) int {
	status := e.Status
	if status < 400 || status > 599 {
		status = StatusForKind(e.Kind)
	}
	if p == ProtocolGemini && status == 529 {
		return http.StatusServiceUnavailable
	}
	return status
}
