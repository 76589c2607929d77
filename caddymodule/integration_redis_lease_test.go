package caddymodule_test

// A concurrency slot in Redis is a lease: a Caddy process killed in the
// middle of a stream cannot hold its client's slot for good. Process A
// (a Caddy process of its own) streams for client carol, whose limit is
// one stream at a time; the in-process Caddy B shares only the
// redis-server, and refuses carol while A's stream runs — past the lease,
// because A renews it — then, once A is SIGKILLed, admits carol again
// within the lease.

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/internal/testredis"
)

// leaseTestLease is the lease the test configures: short, so the test
// waits for it; renewed every third of it.
const leaseTestLease = 2 * time.Second

// leaseSite is one instance's louter site, sharing Redis, and its mock;
// {DELAY} paces the mock's stream.
const leaseSite = `
:{SITE} {
	bind 127.0.0.1
	louter {
		redis {REDIS} {
			prefix lease-test:
			lease {LEASE}
		}
		client carol {
			key_sha256 {CAROL}
			concurrent 1
		}
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{MOCK}
		}
		model to-openai_chat oai
	}
}
:{MOCK} {
	bind 127.0.0.1
	louter_mock {
		name lease-mock
		chunk_delay {DELAY}
	}
}
`

func TestIntegrationRedisLeaseOutlivesKilledInstance(t *testing.T) {
	srv := testredis.Start(t)
	site := func(site, mock, delay string) string {
		return strings.NewReplacer("{SITE}", site, "{MOCK}", mock, "{DELAY}", delay, "{REDIS}", srv.Addr,
			"{LEASE}", leaseTestLease.String(), "{CAROL}", sha256Hex("carol-key")).Replace(leaseSite)
	}
	// A: its own process, a mock that streams 200 words 200ms apart.
	portsA := testcaddy.FreePorts(t, 2)
	a := testcaddy.StartProcess(t, caddyProcessEnv, "{\n\tadmin off\n\tauto_https off\n\tpersist_config off\n}\n"+
		site(fmt.Sprint(portsA[0]), fmt.Sprint(portsA[1]), "200ms"))
	// B: in this process, a mock that answers at once.
	portsB := testcaddy.Start(t, site("{PORT0}", "{PORT1}", "0s"))
	testcaddy.WaitListening(t, portsB[1])
	testcaddy.WaitListening(t, portsA[0])

	request := func(port int, stream bool) (*http.Response, error) {
		body := fmt.Sprintf(`{"model":"to-openai_chat","stream":%t,"messages":[{"role":"user","content":"[mock:long] hi"}]}`, stream)
		req, _ := http.NewRequest(http.MethodPost, testcaddy.URL(port)+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer carol-key")
		return testcaddy.Client.Do(req)
	}
	callB := func() int {
		resp, err := request(portsB[0], false)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}

	// A's stream begins: A holds carol's one slot.
	resp, err := request(portsA[0], true)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("A: status %d: %s", resp.StatusCode, b)
	}
	first, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(first, "data:") {
		t.Fatalf("A: first line %q, %v: want a stream event", first, err)
	}
	// While it runs, B refuses carol, for longer than a lease: A renews.
	for end := time.Now().Add(leaseTestLease * 3 / 2); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if s := callB(); s != http.StatusTooManyRequests {
			t.Fatalf("B: status %d while A streams, want 429", s)
		}
	}

	// A dies mid-stream, releasing nothing.
	a.Stop()
	killed := time.Now()
	if s := callB(); s != http.StatusTooManyRequests {
		t.Fatalf("B: status %d just after A died, want 429 (the lease still runs)", s)
	}
	for {
		s := callB()
		if s == http.StatusOK {
			break
		}
		if s != http.StatusTooManyRequests {
			t.Fatalf("B: status %d, want 429 then 200", s)
		}
		if time.Since(killed) > leaseTestLease+2*time.Second {
			t.Fatalf("B: still 429 %v after A died, with a %v lease: the dead instance's slot leaked", time.Since(killed).Round(time.Millisecond), leaseTestLease)
		}
		time.Sleep(50 * time.Millisecond)
	}
	freed := time.Since(killed)
	t.Logf("the killed instance's slot was free again %v after the kill (lease %v)", freed.Round(time.Millisecond), leaseTestLease)
	if freed > leaseTestLease+500*time.Millisecond {
		t.Errorf("slot freed %v after the kill, want within the %v lease", freed, leaseTestLease)
	}
}
