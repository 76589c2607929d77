package caddymodule_test

import (
	"strings"
	"testing"

	"github.com/louter/louter/internal/testcaddy"
)

// cooldownModelCaddyfile has two routes to one backend (quota), each asking
// it for another model, as two deployments of one Azure resource or two
// models of one Bedrock account are asked; both fall back to quota-backup.
const cooldownModelCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend quota {
			protocol anthropic
			forward_headers X-Mock-Scenario
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend quota-backup {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT2}
		}
		model quota-a quota deployment-a {
			fallback quota-backup gpt-backup
		}
		model quota-b quota deployment-b {
			fallback quota-backup gpt-backup
		}
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name fb-primary
	}
}
:{PORT2} {
	bind 127.0.0.1
	louter_mock {
		name fb-backup
		default_scenario text
	}
}
`

// TestIntegrationCooldownPerModel: a 429 with Retry-After for one model
// cools down that backend and model pair only: the other model still goes
// to the backend, not to its fallback (cloud quotas are per model or
// deployment).
func TestIntegrationCooldownPerModel(t *testing.T) {
	e := startMockEnv(t, testcaddy.Options{}, cooldownModelCaddyfile, 2)
	const primaryGreeting = "Hello from louter_mock (fb-primary)."

	// error_429 answers Retry-After: 7: deployment-a cools down.
	if r, err := askAnthropic(e, "quota-a", "error_429", false); err != nil || r.text != backupGreeting {
		t.Fatalf("quota-a, rate limited: %q, %v", r.text, err)
	}
	e.clearJournals()
	if r, err := askAnthropic(e, "quota-b", "text", false); err != nil || r.text != primaryGreeting {
		t.Errorf("quota-b while deployment-a cools down: %q, %v; want the backend's answer", r.text, err)
	}
	primary := e.journal(0)
	if len(primary) != 1 || !strings.Contains(primary[0].Get("body").String(), `"deployment-b"`) {
		t.Errorf("the backend received %d requests, want quota-b's, for deployment-b: %v", len(primary), primary)
	}
	if n := len(e.journal(1)); n != 0 {
		t.Errorf("the fallback received %d requests, want none", n)
	}

	// deployment-a is still skipped within its Retry-After.
	e.clearJournals()
	if r, err := askAnthropic(e, "quota-a", "text", true); err != nil || r.text != backupGreeting {
		t.Errorf("quota-a within its Retry-After: %q, %v; want the fallback's answer", r.text, err)
	}
	if n := len(e.journal(0)); n != 0 {
		t.Errorf("the backend received %d requests for a cooling deployment", n)
	}
}
