package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/translate"
)

// Claude Code 2.1.330 sends clear_tool_uses_20250919 only when its
// "tool-result clearing after idle" is on: the remote flag
// tengu_jiggly_blossom is "on" (or "shadow", which plans and sends
// nothing), and the newest user message comes more than 3900 s after the
// previous activity with at least 27 clearable tool uses (results of 64
// characters or more) before it. Offline the flag is read from the
// GrowthBook cache in ~/.claude.json (cachedGrowthBookFeatures), which
// Claude Code reads with telemetry off only given
// CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF. The edit it then builds:
// trigger = tool uses - 3, keep 12 (both raised by the tool uses made
// since the return), clear_at_least 20000 input tokens, exclude_tools.
// After the first answer it goes on sending the edit only while the
// server reports cleared tool uses in applied_edits.
const (
	idleClearingFlag   = `{"cachedGrowthBookFeatures":{"tengu_jiggly_blossom":"on"},"hasCompletedOnboarding":true}`
	idleClearingEnv    = "CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF=1"
	idleClearingRounds = 32
	// seqHeader numbers Claude Code's requests, forwarded by louter to
	// the backend, to pair each with what the backend got.
	seqHeader = "X-E2e-Seq"
)

// TestClaudeCodeContextEditsOpenAI runs a long Claude Code session (32
// Bash calls, 7 KB of output each) through louter to an OpenAI Chat
// backend, moves its transcript two hours back and resumes it, so that
// Claude Code sends its clear_tool_uses_20250919 edit as it does to
// Anthropic after an idle hour. The backend must get the conversation as
// Anthropic would show it to the model: the results of all but the newest
// keep tool uses replaced by louter's placeholder, excluded tools and the
// calls' inputs untouched; Claude Code must be told what was cleared
// (applied_edits), keep sending the edit because of it, and finish.
func TestClaudeCodeContextEditsOpenAI(t *testing.T) {
	claude := agentBinary(t, "claude")
	home, work := t.TempDir(), t.TempDir()
	notes := strings.Repeat("A line of notes that the Read tool shows with its number.\n", 100)
	if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte(notes), 0o600); err != nil {
		t.Fatal(err)
	}
	backend := &scriptedShellBackend{rounds: idleClearingRounds, work: work}
	srv := httptest.NewServer(backend)
	defer srv.Close()
	bu, _ := url.Parse(srv.URL)
	ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers `+seqHeader+`
		backend chat {
			protocol openai_chat
			api_key backend-secret
			reverse_proxy `+bu.Host+`
		}
		model * chat
	}
}
`)
	front := newTapProxy(t, testcaddy.URL(ports[0]))
	defer front.srv.Close()

	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(idleClearingFlag), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(claudeEnv(front.srv.URL+"/anthropic"), idleClearingEnv)
	run := func(prompt string, args ...string) string {
		stdout, stderr, err := runIn(t, home, work, claude, env, claudeArgs(prompt, args)...)
		if err != nil || !strings.Contains(stdout, `"subtype":"success"`) {
			t.Fatalf("claude failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
		}
		if strings.Contains(stdout+stderr, "tool-result-clearing") {
			t.Errorf("Claude Code reports a problem with the clearing:\n%s\n%s", stdout, stderr)
		}
		return stdout
	}

	first := run(fmt.Sprintf(`Run the shell command "seq 1 40" %d times.`, idleClearingRounds))
	session := regexp.MustCompile(`"session_id":"([^"]+)"`).FindStringSubmatch(first)
	if session == nil {
		t.Fatalf("no session id in Claude Code's output:\n%s", first)
	}
	ageTranscript(t, home, session[1], 2*time.Hour)
	resumedFrom := front.count()
	run(`Run it once more.`, "--resume", session[1])

	edited := 0
	for seq := resumedFrom; seq < front.count(); seq++ {
		client := front.request(seq)
		edit := clearToolUsesEdit(client)
		if !edit.Exists() {
			continue
		}
		edited++
		got, ok := backend.request(seq)
		if !ok {
			t.Fatalf("request %d never reached the backend", seq)
		}
		cleared := checkCleared(t, seq, client, edit, got)
		reported := appliedClearedToolUses(front.answer(seq))
		t.Logf("request %d: %s; backend had %d results cleared; Claude Code was told %d", seq, edit.Raw, cleared, reported)
		if reported != cleared {
			t.Errorf("request %d: Claude Code was told of %d cleared tool uses, the backend had %d cleared", seq, reported, cleared)
		}
	}
	// The first request after the return, and the next one only because
	// Claude Code read that the server cleared.
	if edited < 2 {
		t.Fatalf("Claude Code sent clear_tool_uses_20250919 on %d requests after the idle return, want at least 2 (the first, and the next after applied_edits); if a new Claude Code gates the edit otherwise, see idleClearingFlag", edited)
	}
}

// checkCleared compares the tool results the backend got for one request
// with Anthropic's application of the request's clear_tool_uses edit to
// the client's body, and returns how many were cleared.
func checkCleared(t *testing.T, seq int, client, edit, backend gjson.Result) int {
	t.Helper()
	type use struct{ name, input, result string }
	var ids []string
	uses := map[string]*use{}
	client.Get("messages").ForEach(func(_, m gjson.Result) bool {
		m.Get("content").ForEach(func(_, b gjson.Result) bool {
			switch b.Get("type").Str {
			case "tool_use":
				ids = append(ids, b.Get("id").Str)
				uses[b.Get("id").Str] = &use{name: b.Get("name").Str, input: b.Get("input").Raw}
			case "tool_result":
				if u := uses[b.Get("tool_use_id").Str]; u != nil {
					u.result = toolResultText(b.Get("content"))
				}
			}
			return true
		})
		return true
	})
	trigger, keep := int(edit.Get("trigger.value").Int()), int(edit.Get("keep.value").Int())
	excluded := map[string]bool{}
	edit.Get("exclude_tools").ForEach(func(_, v gjson.Result) bool { excluded[v.Str] = true; return true })
	if edit.Get("trigger.type").Str != "tool_uses" || edit.Get("keep.type").Str != "tool_uses" || len(ids) <= trigger {
		t.Fatalf("request %d: edit %s on %d tool uses does not trigger: the session is too short", seq, edit.Raw, len(ids))
	}

	// What the backend got: each tool message's content and each call's
	// arguments, by call id.
	results, args := map[string]string{}, map[string]string{}
	backend.Get("messages").ForEach(func(_, m gjson.Result) bool {
		if m.Get("role").Str == "tool" {
			results[m.Get("tool_call_id").Str] = toolResultText(m.Get("content"))
		}
		m.Get("tool_calls").ForEach(func(_, c gjson.Result) bool {
			args[c.Get("id").Str] = c.Get("function.arguments").Str
			return true
		})
		return true
	})
	cleared, clearedBy := 0, map[string]int{}
	for i, id := range ids {
		u := uses[id]
		want := u.result
		if i < len(ids)-keep && !excluded[u.name] {
			want, cleared = translate.ClearedToolResult, cleared+1
			clearedBy[u.name]++
		}
		if got, ok := results[id]; !ok || got != want {
			t.Errorf("request %d, tool use %d of %d (%s): backend result %.60q, want %.60q", seq, i+1, len(ids), u.name, got, want)
		}
		if !jsonEqual(args[id], u.input) {
			t.Errorf("request %d, tool use %d: backend arguments %s, want the input as sent %s", seq, i+1, args[id], u.input)
		}
	}
	if clearedBy["Bash"] == 0 || clearedBy["Read"] == 0 {
		t.Errorf("request %d: want Bash and Read results cleared, cleared %v", seq, clearedBy)
	}
	return cleared
}

// toolResultText is a tool result's content as text: a string, or its
// text blocks joined.
func toolResultText(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.Str
	}
	var b strings.Builder
	c.ForEach(func(_, p gjson.Result) bool {
		b.WriteString(p.Get("text").Str)
		return true
	})
	return b.String()
}

func jsonEqual(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil &&
		fmt.Sprint(x) == fmt.Sprint(y)
}

// clearToolUsesEdit returns the clear_tool_uses_20250919 edit of a
// Messages request.
func clearToolUsesEdit(body gjson.Result) gjson.Result {
	return body.Get(`context_management.edits.#(type=="clear_tool_uses_20250919")`)
}

// appliedClearedToolUses returns cleared_tool_uses of the
// clear_tool_uses_20250919 entry of a streamed answer's applied_edits.
func appliedClearedToolUses(stream string) int {
	for _, line := range strings.Split(stream, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || gjson.Get(data, "type").Str != "message_delta" {
			continue
		}
		return int(gjson.Get(data, `context_management.applied_edits.#(type=="clear_tool_uses_20250919").cleared_tool_uses`).Int())
	}
	return -1
}

// ageTranscript moves every timestamp of a Claude Code session's
// transcript back by d, as if the session had been idle that long.
func ageTranscript(t *testing.T, home, session string, d time.Duration) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", session+".jsonl"))
	if len(files) != 1 {
		t.Fatalf("transcript of session %s: found %v", session, files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	stamp := regexp.MustCompile(`"timestamp":"([^"]+)"`)
	data = stamp.ReplaceAllFunc(data, func(m []byte) []byte {
		ts, err := time.Parse(time.RFC3339Nano, string(stamp.FindSubmatch(m)[1]))
		if err != nil {
			return m
		}
		return []byte(`"timestamp":"` + ts.Add(-d).UTC().Format("2006-01-02T15:04:05.000Z") + `"`)
	})
	if err := os.WriteFile(files[0], data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// tapProxy stands between Claude Code and louter: it numbers each request
// (seqHeader) and keeps the request bodies and answers.
type tapProxy struct {
	srv      *httptest.Server
	mu       sync.Mutex
	requests []string
	answers  map[int]*bytes.Buffer
}

func newTapProxy(t *testing.T, target string) *tapProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &tapProxy{answers: map[int]*bytes.Buffer{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
			rp.ServeHTTP(w, r)
			return
		}
		p.mu.Lock()
		seq := len(p.requests)
		p.requests = append(p.requests, string(body))
		answer := &bytes.Buffer{}
		p.answers[seq] = answer
		p.mu.Unlock()
		r.Header.Set(seqHeader, strconv.Itoa(seq))
		rp.ServeHTTP(&teeWriter{ResponseWriter: w, mu: &p.mu, copy: answer}, r)
	}))
	return p
}

func (p *tapProxy) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.requests)
}

func (p *tapProxy) request(seq int) gjson.Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	return gjson.Parse(p.requests[seq])
}

func (p *tapProxy) answer(seq int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.answers[seq].String()
}

// teeWriter copies what it writes.
type teeWriter struct {
	http.ResponseWriter
	mu   *sync.Mutex
	copy *bytes.Buffer
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.copy.Write(b)
	w.mu.Unlock()
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// scriptedShellBackend is an OpenAI Chat backend for a long agent session,
// which louter_mock's one-call agent script cannot make: asked to run a
// command N times, it calls the Bash tool, each call printing about 7 KB,
// and every fourth time the Read tool, until the conversation holds rounds
// calls; asked to run it once more, it
// calls it once more; otherwise it answers "Done.". It keeps each request
// by its seqHeader.
type scriptedShellBackend struct {
	rounds   int
	work     string // every fourth call reads notes.txt there
	mu       sync.Mutex
	requests map[int]gjson.Result
}

func (b *scriptedShellBackend) request(seq int) (gjson.Result, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, ok := b.requests[seq]
	return r, ok
}

func (b *scriptedShellBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	body := gjson.ParseBytes(raw)
	if seq, err := strconv.Atoi(r.Header.Get(seqHeader)); err == nil {
		b.mu.Lock()
		if b.requests == nil {
			b.requests = map[int]gjson.Result{}
		}
		b.requests[seq] = body
		b.mu.Unlock()
	}
	calls := 0
	var last gjson.Result // the last message that is not a system message
	body.Get("messages").ForEach(func(_, m gjson.Result) bool {
		calls += len(m.Get("tool_calls").Array())
		if m.Get("role").Str != "system" {
			last = m
		}
		return true
	})
	hasBash := body.Get(`tools.#(function.name=="Bash")`).Exists()
	more := last.Get("role").Str == "tool" && calls < b.rounds ||
		last.Get("role").Str == "user" && (strings.Contains(last.Raw, "times") || strings.Contains(last.Raw, "once more"))
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta, finish string) {
		fmt.Fprintf(w, `data: {"id":"chatcmpl-e2e","object":"chat.completion.chunk","model":"e2e","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, finish)
	}
	if hasBash && more && calls%4 == 1 && body.Get(`tools.#(function.name=="Read")`).Exists() {
		args, _ := json.Marshal(map[string]any{"file_path": filepath.Join(b.work, "notes.txt"), "offset": calls})
		call, _ := json.Marshal(map[string]any{"index": 0, "id": fmt.Sprintf("call_e2e_%d", calls), "type": "function",
			"function": map[string]string{"name": "Read", "arguments": string(args)}})
		chunk(`{"role":"assistant","tool_calls":[`+string(call)+`]}`, "null")
		chunk(`{}`, `"tool_calls"`)
	} else if hasBash && more {
		args, _ := json.Marshal(map[string]string{
			"command":     fmt.Sprintf("seq %d %d", 100000+calls*1000, 101000+calls*1000),
			"description": "Print numbers",
		})
		call, _ := json.Marshal(map[string]any{"index": 0, "id": fmt.Sprintf("call_e2e_%d", calls), "type": "function",
			"function": map[string]string{"name": "Bash", "arguments": string(args)}})
		chunk(`{"role":"assistant","tool_calls":[`+string(call)+`]}`, "null")
		chunk(`{}`, `"tool_calls"`)
	} else {
		chunk(`{"role":"assistant","content":"Done."}`, "null")
		chunk(`{}`, `"stop"`)
	}
	fmt.Fprint(w, `data: {"id":"chatcmpl-e2e","object":"chat.completion.chunk","model":"e2e","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110}}`+"\n\ndata: [DONE]\n\n")
}
