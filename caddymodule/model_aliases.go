package caddymodule

import (
	"fmt"
	"slices"
	"strings"
)

// Model aliases (ModelRoute.Aliases) are names a client may send, and sees
// in every model list, for a route's model: agents that pick models from a
// catalogue of their own can then pick a routed one. Claude Code's /model
// picker offers the ids of GET /v1/models that contain "claude" or
// "anthropic"; Antigravity (agy) accepts only Google's own model ids, which
// it resolves from its catalogue before sending; Codex's catalogue is
// louter's list (models_codex.go). An alias is an exact name, matched
// before the next route's pattern, and stands for the route's model: the
// backend is asked for the route's rename, or else for its literal pattern,
// never for the alias. A translated answer names the model the client
// asked for, the alias.

// matches reports whether the route takes model: its pattern matches it or
// it is one of its aliases.
func (r *ModelRoute) matches(model string) bool {
	return globMatch(r.Match, model) || slices.Contains(r.Aliases, model)
}

// backendName is the name the route's backend is asked for when a client
// asks for model and no rename applies: model itself, or, for an alias,
// the route's literal pattern.
func (r *ModelRoute) backendName(model string) string {
	if len(r.Aliases) == 0 || globMatch(r.Match, model) {
		return model
	}
	return r.Match
}

// validateAliases checks the aliases of every route: non-empty, and on a
// route that can name the model an alias stands for (a literal pattern or
// a rename).
func (l *Louter) validateAliases() []error {
	var errs []error
	for i, m := range l.Models {
		if len(m.Aliases) == 0 {
			continue
		}
		if strings.Contains(m.Match, "*") && m.Rename == "" {
			errs = append(errs, fmt.Errorf("model route %d (%q): aliases need a literal pattern or a rename, to know the model they stand for", i, m.Match))
		}
		for _, a := range m.Aliases {
			if a == "" || strings.Contains(a, "*") {
				errs = append(errs, fmt.Errorf("model route %d (%q): alias %q must be a model name, without '*'", i, m.Match, a))
			}
		}
	}
	return errs
}
