package testcaddy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// Reload loads caddyfile in place of the config StartWith started, as a
// config change through the admin API does (the listeners are kept, the
// old config's modules cleaned up), with the ports StartWith returned:
// ports[n] replaces "{PORTn}". opts must be the ones StartWith got.
func Reload(t testing.TB, opts Options, caddyfile string, ports []int) {
	t.Helper()
	for i, p := range ports {
		caddyfile = strings.ReplaceAll(caddyfile, fmt.Sprintf("{PORT%d}", i), fmt.Sprint(p))
	}
	cfg, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(opts.globals()+caddyfile), nil)
	if err != nil {
		t.Fatalf("adapting Caddyfile: %v\n%s", err, caddyfile)
	}
	if err := caddy.Load(cfg, true); err != nil {
		t.Fatalf("reloading config: %v\n%s", err, cfg)
	}
	if len(ports) > 0 {
		WaitListening(t, ports[0])
	}
}
