package caddymodule

import "github.com/louter/louter/translate"

// passesThrough reports whether a request of the client protocol goes to
// backend b as the client sent it (edited, not translated). A backend
// with a dialect needs its answers parsed even for clients of its own
// protocol; one that edits the context itself needs the request decoded
// (context_editing.go).
func (b *Backend) passesThrough(client translate.Protocol) bool {
	return client == b.Protocol && b.Dialect == nil && !b.editsContextItself()
}

// decodesFor is the handler's answer to translate.ScanTopLevelDeferred:
// whether a request of the client protocol will be decoded, so that the
// scan may leave its system prompt and messages to the decoder to
// validate. It is asked at the first of those members, with the model
// when it is known by then. When the model is known (in the path, or before
// the messages in the body, as Claude Code and Codex send it), its
// route's backend decides; a request without a route is refused anyway,
// after the scan validates it all. When the model comes later (the
// OpenAI SDKs send the messages first), any backend that translates for
// the protocol makes deferring the better bet. The answer is only about
// cost: a body passed on is validated before it goes (newAttempt), a body
// decoded by its decoder.
func (l *Louter) decodesFor(client translate.Protocol, model string) bool {
	if model != "" {
		route, ok := l.route(model)
		return ok && route.backend != nil && !route.backend.passesThrough(client)
	}
	for _, b := range l.Backends {
		if !b.passesThrough(client) {
			return true
		}
	}
	return false
}
