package caddymodule_test

// Recorded exchanges through a real Caddy: every client protocol × every
// backend protocol, streaming and not, with backend keys and every form of
// client key; the recording holds no key, and every record replays through
// the current translators with no difference.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/record"
)

func recordCaddyfile(dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario
		record %q {
			max_exchange_size 4MiB
		}
`, dir)
	for _, p := range matrixProtocols {
		fmt.Fprintf(&b, `		backend %[1]s {
			protocol %[1]s
			api_key %[2]s
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model to-%[1]s %[1]s
`, p, matrixBackendKeys[p])
	}
	b.WriteString(`	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name recorder
	}
}
`)
	return b.String()
}

// readRecording waits, up to 10 s, for n records in dir (the writer is
// asynchronous) and returns them.
func readRecording(t *testing.T, dir string, n int) []*record.Exchange {
	t.Helper()
	var all []*record.Exchange
	var raw []byte
	for range 200 {
		all, raw = nil, nil
		files, _ := record.Files(dir)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			raw = append(raw, data...)
		}
		if bytes.Count(raw, []byte("\n")) >= n {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	all, err := record.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n {
		t.Fatalf("%d records, want %d", len(all), n)
	}
	if l := leaked(raw); len(l) > 0 {
		t.Errorf("the recording carries %v", l)
		for line := range bytes.Lines(raw) {
			if len(leaked(line)) > 0 {
				t.Logf("%.2000s", line)
				break
			}
		}
	}
	return all
}

func TestRecordMatrixReplays(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	if d := os.Getenv("RECORD_DEBUG_DIR"); d != "" {
		dir = d
	}
	ports := testcaddy.Start(t, recordCaddyfile(dir))
	testcaddy.WaitListening(t, ports[1])
	louter := testcaddy.URL(ports[0])

	type sent struct {
		name     string
		scenario string
		status   int
	}
	var requests []sent
	for _, client := range matrixProtocols {
		for _, backend := range matrixProtocols {
			for _, stream := range []bool{false, true} {
				for _, scenario := range []string{"text", "reasoning", "error_echo_key", "stream_cut"} {
					name := fmt.Sprintf("%s>%s stream=%v %s", client, backend, stream, scenario)
					resp, err := testcaddy.Client.Do(matrixRequest(t, louter, client, "to-"+backend, stream, scenario))
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					requests = append(requests, sent{name, scenario, resp.StatusCode})
				}
			}
		}
	}
	xs := readRecording(t, dir, len(requests))
	replayed := 0
	for _, x := range xs {
		if x.ID == "" || x.Backend == nil || x.ClientRequest == nil || x.BackendRequest == nil || x.BackendResponse == nil || x.ClientResponse == nil {
			t.Errorf("%s: incomplete record: %+v", x.ID, x)
			continue
		}
		if x.ClientRequest.Header["X-Mock-Scenario"] == nil || x.ClientRequest.Header["X-Api-Key"] != nil || x.BackendRequest.Header["Authorization"] != nil {
			t.Errorf("%s: headers not allowlisted: client %v backend %v", x.ID, x.ClientRequest.Header, x.BackendRequest.Header)
		}
		if strings.Contains(x.ClientRequest.Query, "client-querykey") || !strings.Contains(x.ClientRequest.Query, "redacted") {
			t.Errorf("%s: query %q", x.ID, x.ClientRequest.Query)
		}
		if x.Stream && x.BackendResponse.Status == http.StatusOK && len(x.BackendResponse.Events) == 0 {
			t.Errorf("%s: a streamed answer recorded no events", x.ID)
		}
		res := record.Replay(x, record.Options{})
		if res.Skipped != "" {
			t.Errorf("%s %s>%s: skipped: %s", x.ID, x.Client.Protocol, x.Backend.Protocol, res.Skipped)
			continue
		}
		replayed++
		for _, d := range res.Diffs {
			t.Errorf("%s>%s stream=%v status %d: %s", x.Client.Protocol, x.Backend.Protocol, x.Stream, x.BackendResponse.Status, d)
		}
	}
	if replayed != len(requests) {
		t.Errorf("%d of %d records replayed", replayed, len(requests))
	}
}
