package caddymodule

import (
	"fmt"

	"github.com/louter/louter/translate"
)

// Anthropic's context editing (context_management) per backend: the
// translation applies it (translate.EditContext, in the request path
// through translate.TranslateRequest's RequestRoute.ContextEditing); this
// file holds the backend's setting and what it changes in the handler.
//
//   - "" (the default): a backend whose protocol applies the edits
//     itself (anthropic, bedrock) gets the client's context_management;
//     louter applies them for every other backend and reports
//     applied_edits to the client.
//   - native: the same, written down; refused for a protocol that cannot
//     take the member.
//   - polyfill: louter applies the edits even for an Anthropic-format
//     backend, for servers that speak the Messages API without context
//     editing (llama-server, vLLM, LiteLLM in front of other models).
//   - off: the member is left out and the edits are not applied (counted
//     in louter_dropped_fields_total, as before louter applied them).
//
// An anthropic backend set to polyfill or off gets an Anthropic client's
// requests translated (decoded and encoded again) instead of passed
// through: the edits are made on the decoded request.

// validateContextEditing checks the backend's context_management setting.
func (b *Backend) validateContextEditing(name string) []error {
	switch translate.ContextEditing(b.ContextManagement) {
	case translate.ContextAuto, translate.ContextPolyfill, translate.ContextOff:
		return nil
	case translate.ContextNative:
		if !translate.NativeContextEditing(b.Protocol) {
			return []error{fmt.Errorf("backend %q: context_management native: a %s backend does not apply Anthropic's context edits (use polyfill or off)", name, b.Protocol)}
		}
		return nil
	}
	return []error{fmt.Errorf("backend %q: context_management %q: want native, polyfill or off", name, b.ContextManagement)}
}

// contextEditing is how the backend gets a request's context management.
func (b *Backend) contextEditing() translate.ContextEditing {
	return translate.ContextEditing(b.ContextManagement)
}

// editsContextItself reports whether louter applies (or leaves out) the
// context edits of requests for an Anthropic-format backend, which then
// cannot get a client's request passed through untranslated.
func (b *Backend) editsContextItself() bool {
	m := b.contextEditing()
	return (m == translate.ContextPolyfill || m == translate.ContextOff) && translate.NativeContextEditing(b.Protocol)
}
