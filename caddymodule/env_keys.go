package caddymodule

import (
	"os"
	"strings"
)

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
