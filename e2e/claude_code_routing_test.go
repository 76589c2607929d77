package e2e

import (
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// TestClaudeCodeRoutingAndAffinity runs Claude Code through a model route
// with a thinking condition whose backend has two upstreams balanced on
// X-Louter-Conversation. Every request that asked to think must reach the
// thinking backend, every other the route's own, and all of one session's
// thinking turns the same upstream; the conversation header must not reach
// any backend.
func TestClaudeCodeRoutingAndAffinity(t *testing.T) {
	claude := agentBinary(t, "claude")
	ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend main {
			protocol anthropic
			api_key backend-secret
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend think {
			protocol anthropic
			api_key backend-secret
			reverse_proxy 127.0.0.1:{PORT2} 127.0.0.1:{PORT3} {
				lb_policy header X-Louter-Conversation
			}
		}
		model * main {
			when thinking think
		}
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock cc-main
}
:{PORT2} {
	bind 127.0.0.1
	louter_mock cc-think-1
}
:{PORT3} {
	bind 127.0.0.1
	louter_mock cc-think-2
}
`)
	runClaudeEcho(t, claude, testcaddy.URL(ports[0]))

	thinks := func(req gjson.Result) bool {
		switch req.Get("body.thinking.type").String() {
		case "enabled", "adaptive":
			return true
		}
		return false
	}
	counts := make([]int, 3)
	for i, port := range ports[1:] {
		for _, req := range mockJournal(t, port).Array() {
			counts[i]++
			if req.Get("headers.X-Louter-Conversation").Exists() {
				t.Errorf("the conversation header reached a backend: %s", req.Get("headers").Raw)
			}
			if wantThink := i > 0; thinks(req) != wantThink {
				t.Errorf("upstream %d got a request with thinking %s", i, req.Get("body.thinking").Raw)
			}
		}
	}
	t.Logf("requests: main %d, think upstreams %d and %d", counts[0], counts[1], counts[2])
	if counts[1]+counts[2] == 0 {
		t.Fatal("no Claude Code request asked to think; the condition was not exercised")
	}
	if counts[1] > 0 && counts[2] > 0 {
		t.Errorf("one Claude Code session was spread over both upstreams (%d and %d requests)", counts[1], counts[2])
	}
}
