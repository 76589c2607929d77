package caddymodule_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/record"
)

// TestMockReplaysRecording runs each agent fixture again through a real
// Caddy: the mock answers with the recorded backend responses, louter
// records the new exchanges, and they must be the recorded ones — the same
// backend requests, the same client events — and replay cleanly.
func TestMockReplaysRecording(t *testing.T) {
	files, _ := filepath.Glob("../testdata/recordings/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no recordings in testdata/recordings")
	}
	for _, fixture := range files {
		t.Run(filepath.Base(fixture), func(t *testing.T) {
			want, err := record.ReadFile(fixture)
			if err != nil {
				t.Fatal(err)
			}
			abs, _ := filepath.Abs(fixture)
			dir := filepath.Join(t.TempDir(), "rec")
			ports := testcaddy.Start(t, fmt.Sprintf(`
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend mock {
			protocol openai_chat
			api_key backend-secret-replay-0001
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model * mock
		record %q
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name replay-%s
		replay %q
	}
}
`, dir, filepath.Base(fixture), abs))
			testcaddy.WaitListening(t, ports[1])
			for _, x := range want {
				req, _ := http.NewRequest(x.ClientRequest.Method, testcaddy.URL(ports[0])+x.ClientRequest.Path+query(x.ClientRequest.Query), bytes.NewReader(x.ClientRequest.BodyBytes()))
				for k, v := range x.ClientRequest.Header {
					if k != "Content-Length" {
						req.Header[k] = v
					}
				}
				resp, err := testcaddy.Client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != x.ClientResponse.Status {
					t.Errorf("%s: status %d, recorded %d", x.ID, resp.StatusCode, x.ClientResponse.Status)
				}
			}
			got := readRecording(t, dir, len(want))
			for i, x := range got {
				w := want[i]
				if !bytes.Equal(x.BackendRequest.Body, w.BackendRequest.Body) {
					t.Errorf("%s: the backend request differs from the recorded one", w.ID)
				}
				if names(x.ClientResponse.Events) != names(w.ClientResponse.Events) {
					t.Errorf("%s: client events\n%s\nrecorded\n%s", w.ID, names(x.ClientResponse.Events), names(w.ClientResponse.Events))
				}
				if res := record.Replay(x, record.Options{}); !res.OK() {
					t.Errorf("%s: the new recording does not replay: %s %v", w.ID, res.Skipped, res.Diffs)
				}
			}
			entries := mockJournalEntries(t, ports[1])
			if len(entries) != len(want) {
				t.Errorf("the mock answered %d requests, want %d", len(entries), len(want))
			}
			for _, e := range entries {
				if !strings.HasPrefix(e, "replay "+filepath.Base(fixture)[:4]) {
					t.Errorf("the mock answered with %q, not a recorded response", e)
				}
			}
		})
	}
}

func query(q string) string {
	if q == "" {
		return ""
	}
	return "?" + q
}

// names lists a stream's event names.
func names(events []record.Event) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "%s ", e.Name)
	}
	return fmt.Sprintf("%d events: %s", len(events), b.String())
}

// mockJournalEntries returns the scenario of each request the mock got.
func mockJournalEntries(t *testing.T, port int) []string {
	t.Helper()
	var out []string
	for _, e := range journal(t, testcaddy.URL(port)) {
		out = append(out, e.Get("scenario").String())
	}
	return out
}
