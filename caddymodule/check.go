package caddymodule

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2"
)

// CheckConfig reports what `caddy validate` would refuse in a Caddy JSON
// configuration, and then looks for mistakes it lets through in every
// louter handler (anywhere in the http app's routes, subroutes included).
// It returns one line per problem:
//
//   - each error of caddy.Validate, which provisions the configuration as
//     `caddy validate` does (a client with no key, a key_env that is not
//     set, a route's unknown backend, ...); Caddy stops at the first
//     module that fails, so a second handler's show once the first's are
//     fixed;
//   - a model route that reaches no backend (the backend is not defined);
//   - a model route that can never match because an earlier route's
//     pattern matches every model its own does (first match wins);
//   - an api_key naming an environment variable that is not set here, on
//     a backend a route uses;
//   - a dialect on a backend that does not speak openai_chat, a dialect
//     setting Validate refuses, or a protocol no codec speaks;
//   - a client or route budget that never triggers, because no price line
//     matches the models it covers (budget_check.go).
//
// Its own checks read the configuration as written, without
// provisioning; a problem both find is reported once, by them, with the
// handler's place. The error is for a configuration that is not JSON.
func CheckConfig(cfg []byte) ([]string, error) {
	var root any
	if err := json.Unmarshal(cfg, &root); err != nil {
		return nil, err
	}
	var problems []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["handler"] == "louter" {
				problems = append(problems, checkHandler(path, v)...)
				return
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys) // stable output
			for _, k := range keys {
				walk(path+"."+k, v[k])
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	walk("", root)
	// Validate's errors, but for those a check above already reported in
	// the same words, with the handler's place.
	reported := make(map[string]bool, len(problems))
	for _, p := range problems {
		_, msg, _ := strings.Cut(p, ": ")
		reported[msg] = true
	}
	for _, p := range validateProblems(cfg) {
		if !reported[strings.TrimPrefix(p, validatePrefix)] {
			problems = append(problems, p)
		}
	}
	return problems, nil
}

// validatePrefix starts the problems caddy.Validate reported.
const validatePrefix = "caddy validate: "

// validateProblems runs what `caddy validate` runs on cfg and returns its
// error, one line per line of it. louter's Provision and Validate join
// every error they find, one a line; the first line carries the chain of
// modules Caddy went through, cut to what follows louter's module name.
func validateProblems(cfg []byte) []string {
	var c *caddy.Config
	err := caddy.StrictUnmarshalJSON(caddy.RemoveMetaFields(cfg), &c)
	if err == nil {
		err = caddy.Validate(c)
	}
	if err == nil {
		return nil
	}
	var problems []string
	for i, line := range strings.Split(strings.TrimSpace(err.Error()), "\n") {
		if i == 0 {
			const module = "http.handlers.louter: "
			if j := strings.LastIndex(line, module); j >= 0 {
				line = strings.TrimPrefix(line[j+len(module):], "invalid configuration: ")
			}
		}
		if line = strings.TrimSpace(line); line != "" {
			problems = append(problems, validatePrefix+line)
		}
	}
	return problems
}

// checkHandler checks one louter handler; where names it in the config.
func checkHandler(where string, raw map[string]any) []string {
	b, _ := json.Marshal(raw)
	var l Louter
	if err := json.Unmarshal(b, &l); err != nil {
		return []string{fmt.Sprintf("%s: louter handler: %v", where, err)}
	}
	var problems []string
	add := func(format string, args ...any) {
		problems = append(problems, where+": "+fmt.Sprintf(format, args...))
	}

	routed := make(map[string]bool)
	for _, m := range l.Models {
		routed[m.Backend] = true
		for _, fb := range m.Fallbacks {
			routed[fb.Backend] = true // a fallback is called too
		}
		for _, c := range m.When {
			routed[c.Backend] = true // route_conditions.go
		}
	}
	names := make([]string, 0, len(l.Backends))
	for name := range l.Backends {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		bk := l.Backends[name]
		if bk == nil {
			add("backend %q: empty definition", name)
			continue
		}
		if _, _, ok := servedProtocol(bk.Protocol); !ok {
			add("backend %q: unknown protocol %q (known: %s)", name, bk.Protocol, knownProtocols())
		}
		if bk.Dialect != nil {
			if !takesDialect(bk.Protocol) {
				add("backend %q: dialect applies to %s backends only, not %q", name, dialectProtocols(), bk.Protocol)
			}
			if err := bk.Dialect.Validate(); err != nil {
				add("backend %q: %v", name, err)
			}
		}
		if !routed[name] {
			continue // never called: its key does not matter
		}
		for _, v := range unsetEnvVars(bk.APIKey) {
			add("backend %q: api_key names the environment variable %s, which is not set", name, v)
		}
		add2 := func(field, v string) {
			add("backend %q: auth %s names the environment variable %s, which is not set", name, field, v)
		}
		checkAuthEnv(bk.AuthRaw, add2)
	}

	// Worded as Validate words them (module.go, fallback.go,
	// route_conditions.go), so that CheckConfig reports each once.
	for i, m := range l.Models {
		if _, ok := l.Backends[m.Backend]; !ok {
			add("model route %d (%q): unknown backend %q", i, m.Match, m.Backend)
		}
		for j, fb := range m.Fallbacks {
			if _, ok := l.Backends[fb.Backend]; !ok {
				add("model route %d (%q): fallback %d: unknown backend %q", i, m.Match, j, fb.Backend)
			}
		}
		for j, c := range m.When {
			if _, ok := l.Backends[c.Backend]; !ok {
				add("model route %d (%q), condition %d: unknown backend %q", i, m.Match, j, c.Backend)
			}
		}
		for _, earlier := range l.Models[:i] {
			if globCovers(earlier.Match, m.Match) {
				add("model %q: never matches: the earlier route %q matches every model it does", m.Match, earlier.Match)
				break
			}
		}
	}
	for _, line := range unpricedBudgets(l.Clients, l.Models, l.Prices) { // budget_check.go
		add("%s", line)
	}
	problems = append(problems, checkRecord(where, l.Record)...) // record_config.go
	return problems
}

// globCovers reports whether every model name pattern q matches is also
// matched by pattern p. A '*' in q can stand for any text, so only a '*' of
// p can absorb it; globMatch gives exactly that when q itself is matched
// as the subject: its '*' bytes equal no literal byte of p, and p's stars
// swallow anything.
func globCovers(p, q string) bool {
	return globMatch(p, q)
}

// checkAuthEnv reports each environment variable a backend's auth module
// names in a setting (a key from {env.AWS_SECRET_ACCESS_KEY}) that is not
// set here; its settings are read as written, whatever the module.
func checkAuthEnv(raw json.RawMessage, add func(field, v string)) {
	var fields map[string]any
	if json.Unmarshal(raw, &fields) != nil {
		return
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if s, ok := fields[k].(string); ok {
			for _, v := range unsetEnvVars(s) {
				add(k, v)
			}
		}
	}
}
