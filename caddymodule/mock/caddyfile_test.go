package mock

import (
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile" // the caddyfile adapter
	"github.com/tidwall/gjson"
)

func TestUnmarshalCaddyfile(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  Mock
	}{
		{"full", `louter_mock {
			name backend-a
			default_scenario text
			chunk_delay 5ms
			chunk_size 3
			fixtures_dir ./testdata
			model_prefix "pre/"
		}`, Mock{Name: "backend-a", DefaultScenario: "text", ChunkDelay: caddy.Duration(5 * time.Millisecond), ChunkSize: 3, FixturesDir: "./testdata", ModelPrefix: "pre/"}},
		{"bare", `louter_mock`, Mock{}},
		{"name argument", `louter_mock backend-b`, Mock{Name: "backend-b"}},
		{"fixture default", `louter_mock {
			default_scenario fixture=a.sse
		}`, Mock{DefaultScenario: "fixture=a.sse"}},
		{"empty model prefix", `louter_mock {
			model_prefix ""
		}`, Mock{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Mock
			if err := m.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input)); err != nil {
				t.Fatal(err)
			}
			if m != tt.want {
				t.Errorf("got %+v, want %+v", m, tt.want)
			}
		})
	}
}

func TestUnmarshalCaddyfileErrors(t *testing.T) {
	tests := []struct{ name, input, want string }{
		{"two arguments", `louter_mock a b`, "wrong argument count"},
		{"unknown subdirective", "louter_mock {\n bogus 1\n}", "unrecognized"},
		{"unknown scenario", "louter_mock {\n default_scenario nope\n}", "unknown scenario"},
		{"bad delay", "louter_mock {\n chunk_delay soon\n}", "chunk_delay"},
		{"negative delay", "louter_mock {\n chunk_delay -5ms\n}", "negative"},
		{"bad size", "louter_mock {\n chunk_size big\n}", "chunk_size"},
		{"negative size", "louter_mock {\n chunk_size -1\n}", "chunk_size"},
		{"missing value", "louter_mock {\n name\n}", "wrong argument count"},
		{"extra value", "louter_mock {\n fixtures_dir a b\n}", "wrong argument count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Mock
			err := m.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestCaddyfileAdapt checks the directive is registered and ordered: a site
// block whose only handler is louter_mock adapts without an order line.
func TestCaddyfileAdapt(t *testing.T) {
	adapter := caddyconfig.GetAdapter("caddyfile")
	if adapter == nil {
		t.Fatal("no caddyfile adapter")
	}
	input := `:8080 {
	louter_mock {
		name backend-a
		chunk_delay 5ms
	}
}
:8081 {
	respond /health 200
	louter_mock /api/* backend-b
}`
	out, warnings, err := adapter.Adapt([]byte(input), nil)
	if err != nil {
		t.Fatalf("adapt: %v (warnings %v)", err, warnings)
	}
	servers := gjson.GetBytes(out, "apps.http.servers")
	a := servers.Get("srv0.routes.0.handle.0")
	if a.Get("handler").String() != "louter_mock" || a.Get("name").String() != "backend-a" || a.Get("chunk_delay").Int() != int64(5*time.Millisecond) {
		t.Errorf("the only handler of a site: %s", a.Raw)
	}
	// respond is ordered before louter_mock; the matcher is kept.
	routes := servers.Get("srv1.routes")
	if routes.Get("0.handle.0.handler").String() != "static_response" ||
		routes.Get("1.handle.0.handler").String() != "louter_mock" || routes.Get("1.handle.0.name").String() != "backend-b" ||
		routes.Get("1.match.0.path.0").String() != "/api/*" {
		t.Errorf("routes: %s", routes.Raw)
	}
}
