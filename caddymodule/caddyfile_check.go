package caddymodule

import (
	"fmt"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/louter/louter/translate"
)

// These checks repeat some of Validate's while the Caddyfile is parsed, so
// that the error names the line at fault as parse errors do; Validate
// still runs on every configuration, JSON included.

// checkBackendProtocol reports a protocol no codec speaks, and a dialect
// block on a backend that does not speak openai_chat, whichever of the two
// lines comes last.
func checkBackendProtocol(b *Backend) error {
	if b.Protocol != "" {
		if _, ok := translate.Lookup(b.Protocol); !ok {
			return fmt.Errorf("unknown protocol '%s' (known: %s)", b.Protocol, knownProtocols())
		}
	}
	if b.Dialect != nil && b.Protocol != "" && b.Protocol != translate.ProtocolOpenAIChat {
		return fmt.Errorf("dialect applies to openai_chat backends only, not %s", b.Protocol)
	}
	return nil
}

// checkModelBackends reports model routes that name no backend of the
// block; backends may be defined after the routes that use them, so this
// runs at the end of the block, with the lines of the model routes.
func (l *Louter) checkModelBackends(lines []caddyfile.Token) error {
	for i, m := range l.Models {
		if _, ok := l.Backends[m.Backend]; !ok && i < len(lines) {
			return fmt.Errorf("model %s: no backend named '%s' in this louter block, at %s:%d", m.Match, m.Backend, lines[i].File, lines[i].Line)
		}
		for _, fb := range m.Fallbacks {
			if _, ok := l.Backends[fb.Backend]; !ok && i < len(lines) {
				return fmt.Errorf("model %s: fallback: no backend named '%s' in this louter block, at %s:%d", m.Match, fb.Backend, lines[i].File, lines[i].Line)
			}
		}
	}
	return nil
}
