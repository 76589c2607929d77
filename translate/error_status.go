package translate

// ClientStatus is the HTTP status a client of protocol p is answered with
// for e. It is e's status (or the one its kind implies) except where the
// client's provider never uses that status for that error (StatusCodec):
// Gemini reports an overloaded model as 503 UNAVAILABLE, never with
// Anthropic's 529.
func ClientStatus(p Protocol, e *Error) int {
	status := e.Status
	if status < 400 || status > 599 {
		status = StatusForKind(e.Kind)
	}
	if c, ok := codecAs[StatusCodec](p); ok {
		return c.ClientStatus(status, e)
	}
	return status
}
