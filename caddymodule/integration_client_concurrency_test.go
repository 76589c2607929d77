package caddymodule_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// TestIntegrationConcurrentLimit holds one request open at the mock (a
// stall before its answer) under concurrent 1: a second request is refused
// with 429 while it is in progress, and admitted once it has ended.
func TestIntegrationConcurrentLimit(t *testing.T) {
	ports := testcaddy.Start(t, strings.ReplaceAll(`
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Stall-Before
		client carol {
			key_sha256 {CAROL}
			concurrent 1
		}
		backend anth {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model to-anthropic anth
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name concurrency-mock
	}
}
`, "{CAROL}", sha256Hex("carol-key")))
	testcaddy.WaitListening(t, ports[1])
	base := testcaddy.URL(ports[0])
	send := func(ctx context.Context, stall string) (int, []byte, http.Header) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/messages",
			strings.NewReader(`{"model":"to-anthropic","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("X-Api-Key", "carol-key")
		req.Header.Set("Anthropic-Version", "2023-06-01")
		if stall != "" {
			req.Header.Set("X-Mock-Stall-Before", stall)
		}
		resp, err := testcaddy.Client.Do(req)
		if err != nil {
			return 0, nil, nil // the held request, cancelled
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b, resp.Header
	}

	ctx, cancel := context.WithCancel(context.Background())
	var held chan struct{}
	hold := func() {
		held = make(chan struct{})
		go func(done chan struct{}) {
			defer close(done)
			send(ctx, "30s") // cancelled below, long before the stall ends
		}(held)
	}
	hold()
	// A probe sent before the held request was admitted may take the slot
	// itself (and the held request then ends with a 429: it is sent
	// again); once the held request holds it, a probe is refused
	// (bounded: 200 tries).
	refused := false
	for i := 0; i < 200 && !refused; i++ {
		select {
		case <-held:
			hold()
		default:
		}
		status, body, h := send(context.Background(), "")
		if status == http.StatusTooManyRequests {
			refused = true
			if gjson.GetBytes(body, "error.type").Str != "rate_limit_error" || h.Get("Retry-After") == "" {
				t.Errorf("refusal: %s %v", body, h)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-held
	if !refused {
		t.Fatal("a second request was never refused while one was in progress under concurrent 1")
	}
	// The held request's slot is freed when louter's handler returns,
	// just after the client saw the connection go (bounded: 200 tries).
	for i := 0; i < 200; i++ {
		if status, _, _ := send(context.Background(), ""); status == http.StatusOK {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the slot of the cancelled request was never freed")
}
