package caddymodule

import (
	"fmt"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// These checks repeat some of Validate's while the Caddyfile is parsed, so
// that the error names the line at fault as parse errors do; Validate
// still runs on every configuration, JSON included.

// checkBackendProtocol reports a protocol no codec speaks, and a dialect
// block on a backend that does not speak openai_chat, whichever of the two
// lines comes last.
func checkBackendProtocol(b *Backend) error {
	if b.Protocol != "" {
		if _, _, ok := servedProtocol(b.Protocol); !ok {
			return fmt.Errorf("unknown protocol '%s' (known: %s)", b.Protocol, knownProtocols())
		}
	}
	if b.Dialect != nil && b.Protocol != "" && !takesDialect(b.Protocol) {
		return fmt.Errorf("dialect applies to %s backends only, not %s", dialectProtocols(), b.Protocol)
	}
	return nil
}

// routeLines are where a model route and its when conditions were
// written, for the errors of checkModelBackends.
type routeLines struct {
	model caddyfile.Token
	when  []caddyfile.Token
}

// checkModelBackends reports model routes, fallbacks and when conditions
// that name no backend of the block; backends may be defined after the
// routes that use them, so this runs at the end of the block, with the
// lines the routes and conditions were written on.
func (l *Louter) checkModelBackends(lines []routeLines) error {
	for i, m := range l.Models {
		if i >= len(lines) {
			break
		}
		at := lines[i].model
		if _, ok := l.Backends[m.Backend]; !ok {
			return fmt.Errorf("model %s: no backend named '%s' in this louter block, at %s:%d", m.Match, m.Backend, at.File, at.Line)
		}
		for _, fb := range m.Fallbacks {
			if _, ok := l.Backends[fb.Backend]; !ok {
				return fmt.Errorf("model %s: fallback: no backend named '%s' in this louter block, at %s:%d", m.Match, fb.Backend, at.File, at.Line)
			}
		}
		for j, c := range m.When {
			if _, ok := l.Backends[c.Backend]; !ok && j < len(lines[i].when) {
				w := lines[i].when[j]
				return fmt.Errorf("model %s: when %s: no backend named '%s' in this louter block, at %s:%d", m.Match, c.String(), c.Backend, w.File, w.Line)
			}
		}
	}
	return nil
}
