package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// frameTap is a WebSocket-aware relay in front of louter: it forwards
// Codex's upgrade to louter and every frame both ways, and records the
// upgrade's headers, each frame Codex sent, the types of the frames louter
// answered, and the plain HTTP requests.
type frameTap struct {
	target string

	mu       sync.Mutex
	headers  []http.Header // of each upgrade
	sent     []string      // Codex's frames, in order
	received []string      // louter's frames' types, in order
	posts    []string      // method and path of the plain requests
}

func (f *frameTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		f.mu.Lock()
		f.posts = append(f.posts, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		u, _ := url.Parse("http://" + f.target)
		httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, r)
		return
	}
	f.mu.Lock()
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	h := http.Header{}
	for k, v := range r.Header {
		switch strings.ToLower(k) {
		case "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions":
		default:
			h[k] = v
		}
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	up, resp, err := websocket.Dial(ctx, "ws://"+f.target+r.URL.RequestURI(), &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		status := http.StatusBadGateway
		if resp != nil {
			status = resp.StatusCode
		}
		http.Error(w, err.Error(), status)
		return
	}
	up.SetReadLimit(64 << 20)
	down, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	down.SetReadLimit(64 << 20)
	go func() {
		defer cancel()
		for {
			typ, p, err := up.Read(ctx)
			if err != nil {
				_ = down.Close(websocket.StatusNormalClosure, "")
				return
			}
			f.mu.Lock()
			f.received = append(f.received, gjson.GetBytes(p, "type").Str)
			f.mu.Unlock()
			if down.Write(ctx, typ, p) != nil {
				return
			}
		}
	}()
	for {
		typ, p, err := down.Read(ctx)
		if err != nil {
			_ = up.Close(websocket.StatusNormalClosure, "")
			return
		}
		f.mu.Lock()
		f.sent = append(f.sent, string(p))
		f.mu.Unlock()
		if up.Write(ctx, typ, p) != nil {
			return
		}
	}
}

// TestCodexWebSocketFrames records what Codex 0.169's built-in provider
// sends on the Responses WebSocket through louter, with its default
// features and with the responses_websockets_v2 and steer features turned
// on, and checks the facts docs/stored-responses.md states: every frame is
// a response.create (no stream_id, no steering or cancel frame), the turns
// after the first continue the socket's previous response, the session
// completes a tool call on the socket with no HTTP fallback, and the
// feature keys (retired in 0.169) change nothing on the wire.
func TestCodexWebSocketFrames(t *testing.T) {
	codex := agentBinary(t, "codex")
	wire := map[string][]string{} // mode: each frame's type and keys, and the beta header
	for _, mode := range []struct{ name, features string }{
		{"default", ""},
		{"v2", "responses_websockets_v2 = true\nsteer = true\n"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend mock {
			protocol anthropic
			api_key backend-secret
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model * mock
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name codex-frames
	}
}
`)
			tap := &frameTap{target: fmt.Sprintf("127.0.0.1:%d", ports[0])}
			srv := httptest.NewServer(tap)
			t.Cleanup(srv.Close)
			codexHome := t.TempDir()
			config := fmt.Sprintf(codexBuiltinConfig, srv.URL+"/v1") + mode.features
			if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, err := runIsolated(t, codex, []string{
				"CODEX_HOME=" + codexHome,
				"OPENAI_API_KEY=sk-codex-client-dummy",
				"CODEX_API_KEY=sk-codex-client-dummy",
			}, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json", echoPrompt)
			if err != nil || !strings.Contains(stdout, "louter-ok") {
				t.Fatalf("codex failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			tap.mu.Lock()
			defer tap.mu.Unlock()
			for i, h := range tap.headers {
				var names []string
				for k := range h {
					names = append(names, k)
				}
				sort.Strings(names)
				t.Logf("upgrade %d: OpenAI-Beta %q, x-codex-beta-features %q, headers %v", i, h.Get("OpenAI-Beta"), h.Get("X-Codex-Beta-Features"), names)
			}
			for i, s := range tap.sent {
				fr := gjson.Parse(s)
				var keys []string
				fr.ForEach(func(k, _ gjson.Result) bool { keys = append(keys, k.Str); return true })
				var items []string
				for _, it := range fr.Get("input").Array() {
					items = append(items, it.Get("type").Str+"/"+it.Get("role").Str)
				}
				t.Logf("sent %d: type %q keys %v previous_response_id %q generate %s input %v client_metadata %s",
					i, fr.Get("type").Str, keys, fr.Get("previous_response_id").Str, fr.Get("generate").Raw, items, fr.Get("client_metadata").Raw)
			}
			t.Logf("received types: %v", tap.received)
			t.Logf("plain requests: %v", tap.posts)

			if len(tap.headers) == 0 || len(tap.sent) < 2 {
				t.Fatalf("Codex opened %d sockets and sent %d frames; want its turns on the socket", len(tap.headers), len(tap.sent))
			}
			for _, p := range tap.posts {
				if strings.HasSuffix(p, "/responses") {
					t.Errorf("a turn went over HTTP (%s): the socket should have served it", p)
				}
			}
			var chained int
			wire[mode.name] = append(wire[mode.name], tap.headers[0].Get("OpenAI-Beta"))
			for i, s := range tap.sent {
				fr := gjson.Parse(s)
				var keys []string
				fr.ForEach(func(k, _ gjson.Result) bool { keys = append(keys, k.Str); return true })
				sort.Strings(keys)
				wire[mode.name] = append(wire[mode.name], strings.Join(keys, ","))
				if typ := fr.Get("type").Str; typ != "response.create" {
					t.Errorf("frame %d has type %q; Codex 0.169 was seen to send only response.create", i, typ)
				}
				if fr.Get("stream_id").Exists() {
					t.Errorf("frame %d carries stream_id %s", i, fr.Get("stream_id").Raw)
				}
				if fr.Get("previous_response_id").Str != "" {
					chained++
				}
			}
			if chained == 0 {
				t.Errorf("no frame continued a previous response on the socket")
			}
		})
	}
	if d, v := strings.Join(wire["default"], "\n"), strings.Join(wire["v2"], "\n"); d != v {
		t.Errorf("the v2 features changed the wire:\ndefault:\n%s\nv2:\n%s", d, v)
	}
}
