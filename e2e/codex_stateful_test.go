package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// codexBuiltinConfig keeps Codex's built-in OpenAI provider, which is
// WebSocket-first and compacts remotely, and points it at louter with
// openai_base_url (a [model_providers] entry would turn the WebSocket off).
const codexBuiltinConfig = `model = "gpt-5.5"
openai_base_url = %q
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
[analytics]
enabled = false
[feedback]
enabled = false
[otel]
exporter = "none"
[features]
plugins = false
remote_plugin = false
apps = false
`

// wireTap is a TCP relay in front of louter that counts what went over
// the wire: WebSocket handshakes answered 101 or 426, and HTTP POSTs to
// /responses.
type wireTap struct {
	mu                     sync.Mutex
	upgrades, switched     int
	refused, posts, wsSent int
}

func (w *wireTap) start(t *testing.T, target string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go w.relay(c, target)
		}
	}()
	return "http://" + ln.Addr().String()
}

func (w *wireTap) relay(c net.Conn, target string) {
	defer c.Close()
	u, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer u.Close()
	done := make(chan struct{})
	go func() {
		w.copy(u, c, true)
		close(done)
	}()
	w.copy(c, u, false)
	<-done
}

// copy relays src to dst, counting the requests or answers it sees. The
// counts read each chunk's start, which is enough for the heads here.
func (w *wireTap) copy(dst, src net.Conn, fromClient bool) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p := buf[:n]
			w.mu.Lock()
			switch {
			case fromClient && bytes.HasPrefix(p, []byte("GET ")) && bytes.Contains(bytes.ToLower(p), []byte("upgrade: websocket")):
				w.upgrades++
			case fromClient && bytes.HasPrefix(p, []byte("POST ")) && bytes.Contains(p[:bytes.IndexByte(p, '\n')+1], []byte("/responses ")):
				w.posts++
			case fromClient && w.switched > 0 && !bytes.HasPrefix(p, []byte("GET ")) && !bytes.HasPrefix(p, []byte("POST ")):
				w.wsSent++
			case !fromClient && bytes.HasPrefix(p, []byte("HTTP/1.1 101")):
				w.switched++
			case !fromClient && bytes.HasPrefix(p, []byte("HTTP/1.1 426")):
				w.refused++
			}
			w.mu.Unlock()
			if _, err := dst.Write(p); err != nil {
				return
			}
		}
		if err != nil {
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			if err != io.EOF {
				return
			}
			return
		}
	}
}

// TestCodexStatefulThroughLouter runs Codex with its built-in provider
// (WebSocket first) through louter to an OpenAI Chat, an Anthropic and a
// Gemini backend: once over the WebSocket, where Codex chains its turns by
// previous_response_id and sends only the new items, and once with the
// WebSocket turned off, where the 426 sends Codex to HTTP at once. Either
// way the multi-turn tool session completes and each backend request holds
// the whole history: the prompt, the call and its result.
func TestCodexStatefulThroughLouter(t *testing.T) {
	codex := agentBinary(t, "codex")
	for _, protocol := range []string{"openai_chat", "anthropic", "gemini"} {
		for _, ws := range []string{"on", "off"} {
			t.Run(protocol+" websocket "+ws, func(t *testing.T) {
				logFile := filepath.Join(t.TempDir(), "caddy.log")
				ports := testcaddy.StartWith(t, testcaddy.Options{LogLevel: "DEBUG", LogFile: logFile}, fmt.Sprintf(`
:{PORT0} {
	bind 127.0.0.1
	louter {
		stored_responses {
			websocket %s
		}
		backend mock {
			protocol %s
			api_key backend-secret
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model * mock
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name codex-stateful-%s
	}
}
`, ws, protocol, protocol))
				tap := &wireTap{}
				base := tap.start(t, fmt.Sprintf("127.0.0.1:%d", ports[0]))
				codexHome := t.TempDir()
				if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(fmt.Sprintf(codexBuiltinConfig, base+"/v1")), 0o600); err != nil {
					t.Fatal(err)
				}
				stdout, stderr, err := runIsolated(t, codex, []string{
					"CODEX_HOME=" + codexHome,
					"OPENAI_API_KEY=sk-codex-client-dummy",
					"CODEX_API_KEY=sk-codex-client-dummy",
				}, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json",
					`Run the shell command "echo louter-ok" and tell me its output.`)
				if err != nil {
					t.Fatalf("codex failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
				}
				var ran, answered bool
				for _, line := range strings.Split(stdout, "\n") {
					ev := gjson.Parse(line)
					if ev.Get("type").Str != "item.completed" {
						continue
					}
					item := ev.Get("item")
					switch item.Get("type").Str {
					case "command_execution":
						ran = ran || strings.Contains(item.Get("aggregated_output").Str, "louter-ok")
					case "agent_message":
						answered = answered || strings.Contains(item.Get("text").Str, "louter-ok")
					}
				}
				if !ran || !answered {
					t.Fatalf("Codex did not complete the tool session (ran %v, answered %v):\n%s\nstderr:\n%s", ran, answered, stdout, stderr)
				}
				tap.mu.Lock()
				upgrades, switched, refused, posts := tap.upgrades, tap.switched, tap.refused, tap.posts
				tap.mu.Unlock()
				t.Logf("wire: %d upgrades, %d switched, %d refused with 426, %d POST /responses", upgrades, switched, refused, posts)
				if ws == "on" && (switched == 0 || posts != 0) {
					t.Errorf("websocket on: %d sockets opened and %d HTTP posts, want the turns on the socket", switched, posts)
				}
				if ws == "off" && (refused == 0 || switched != 0 || posts < 2) {
					t.Errorf("websocket off: %d refusals, %d sockets, %d posts; want a 426 and the turns over HTTP", refused, switched, posts)
				}
				if ws == "on" {
					// Codex chained its turns on the socket (store false):
					// louter found each previous response.
					logs, _ := os.ReadFile(logFile)
					if !strings.Contains(string(logs), `"continuing a stored response"`) || strings.Contains(string(logs), "previous response not found") {
						t.Errorf("Codex did not continue a response on the socket:\n%s", logs)
					}
				}
				// The backend got the whole history with the result.
				journal := mockJournal(t, ports[1]).Array()
				var full bool
				for _, req := range journal {
					body := req.Get("body").Raw
					full = full || strings.Contains(body, "echo louter-ok") && strings.Contains(body, "louter-ok\\n") && strings.Count(body, "louter-ok") >= 3
					if strings.Contains(req.Get("headers").Raw, "sk-codex-client-dummy") {
						t.Errorf("the client's key reached the backend")
					}
				}
				if !full {
					t.Errorf("no backend request held the prompt, the call and its result:\n%s", journal[len(journal)-1].Raw)
				}
			})
		}
	}
}
