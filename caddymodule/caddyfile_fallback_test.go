package caddymodule

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

const fallbackBackends = `
		backend anth {
			protocol anthropic
			reverse_proxy localhost:9001
		}
		backend oai {
			protocol openai_chat
			reverse_proxy localhost:9002
		}
		backend gem {
			protocol gemini
			reverse_proxy localhost:9003
		}`

func TestUnmarshalCaddyfileFallback(t *testing.T) {
	d := caddyfile.NewTestDispenser(`
	louter {` + fallbackBackends + `
		model claude-* anth {
			list claude-sonnet-4-5
			fallback oai gpt-5.5
			fallback gem
		}
		model gpt-* oai
	}`)
	var l Louter
	if err := l.UnmarshalCaddyfile(d); err != nil {
		t.Fatal(err)
	}
	want := []RouteFallback{{Backend: "oai", Rename: "gpt-5.5"}, {Backend: "gem"}}
	if got := l.Models[0].Fallbacks; !reflect.DeepEqual(got, want) {
		t.Errorf("fallbacks = %+v, want %+v", got, want)
	}
	if l.Models[0].Backend != "anth" || l.Models[0].Rename != "" || len(l.Models[0].List) != 1 {
		t.Errorf("route = %+v", l.Models[0])
	}
	if len(l.Models[1].Fallbacks) != 0 {
		t.Errorf("route without fallback = %+v", l.Models[1])
	}
	// The JSON form the Caddyfile adapts to.
	raw, err := json.Marshal(l.Models[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"fallbacks":[{"backend":"oai","rename":"gpt-5.5"},{"backend":"gem"}]`) {
		t.Errorf("JSON = %s", raw)
	}
}

func TestUnmarshalCaddyfileFallbackErrors(t *testing.T) {
	for _, tc := range []struct{ name, route, want string }{
		{"no backend", "model c* anth {\n fallback\n }", "wrong argument count"},
		{"too many", "model c* anth {\n fallback oai m extra\n }", "wrong argument count"},
		{"unknown backend", "model c* anth {\n fallback nope\n }", "fallback: no backend named 'nope'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l Louter
			err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser("louter {" + fallbackBackends + "\n" + tc.route + "\n}"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestValidateFallbacks(t *testing.T) {
	m := ModelRoute{Match: "c*", Fallbacks: []RouteFallback{{Backend: "oai", backend: &Backend{}}, {Backend: "gone"}}}
	errs := m.validateFallbacks(2)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `model route 2 ("c*"): fallback 1: unknown backend "gone"`) {
		t.Errorf("errs = %v", errs)
	}
}
