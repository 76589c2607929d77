package caddymodule_test

import (
	"testing"

	"github.com/louter/louter/internal/testcaddy"
)

// caddyProcessEnv makes the test binary run as Caddy (TestMain): a test
// that needs a Caddy process of its own — one it can kill — starts one
// with testcaddy.StartProcess.
const caddyProcessEnv = "LOUTER_CADDYMODULE_RUN_CADDY"

func TestMain(m *testing.M) { testcaddy.Main(m, caddyProcessEnv) }
