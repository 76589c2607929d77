package caddymodule

import (
	"os"
	"slices"
	"strings"

	"go.uber.org/zap"
)

// warnUnsetKeys logs a warning for each backend a model route uses whose
// api_key names an unset environment variable. Backends no route uses are
// never called, so their keys do not matter: the example defines real
// providers whose keys are only exported when they are used.
func (l *Louter) warnUnsetKeys() {
	names := make([]string, 0, len(l.Backends))
	for name := range l.Backends {
		names = append(names, name)
	}
	slices.Sort(names) // stable log order
	for _, name := range names {
		b := l.Backends[name]
		if b == nil || !l.routesTo(b) {
			continue
		}
		for _, v := range unsetEnvVars(b.APIKey) {
			l.logger.Warn("api_key names an environment variable that is not set: the backend gets no key",
				zap.String("backend", name), zap.String("variable", v))
		}
	}
}

// routesTo reports whether a model route sends requests to b.
func (l *Louter) routesTo(b *Backend) bool {
	for i := range l.Models {
		if l.Models[i].backend == b {
			return true
		}
	}
	return false
}

// unsetEnvVars returns the names of the {env.NAME} placeholders in s whose
// environment variable is not set. Such a placeholder resolves to "", so a
// backend whose api_key names one would start with no key and every request
// would fail upstream with an authentication error that says nothing of why.
func unsetEnvVars(s string) []string {
	var names []string
	for {
		i := strings.Index(s, "{env.")
		if i < 0 {
			return names
		}
		s = s[i+len("{env."):]
		j := strings.IndexByte(s, '}')
		if j < 0 {
			return names
		}
		if name := s[:j]; name != "" {
			if _, ok := os.LookupEnv(name); !ok {
				names = append(names, name)
			}
		}
		s = s[j+1:]
	}
}
