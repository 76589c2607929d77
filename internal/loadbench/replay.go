package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/louter/louter/internal/loadbench/harness"
	"github.com/louter/louter/internal/loadbench/results"
	"github.com/louter/louter/record"
	"github.com/louter/louter/translate"
)

// The session-replay mode (-replay) replays recorded agent sessions
// (record's JSON Lines: Claude Code, Codex, Gemini CLI through louter to
// an OpenAI Chat backend) as the agents sent them: each of conc clients
// sends a session's turns one after the other, each turn's request with
// the context the agent had grown by then, and reads the whole stream
// before it sends the next. Louter gets the client's recorded request;
// Caddy's plain reverse_proxy, the baseline, gets the bytes louter sent
// the backend for it. One loopback upstream answers both with the
// backend's recorded stream for that turn, one write and flush per
// event, as a model server sends it. The turn is found by its model
// name, which the replay tags with the turn's number (modelTag): louter
// passes the model on, so the same tag reaches the upstream both ways.

// defaultReplay are the project's recordings of the three agents.
const defaultReplay = "testdata/recordings/claude-code.jsonl,testdata/recordings/codex.jsonl,testdata/recordings/gemini-cli.jsonl"

// replay runs the session-replay mode.
func replay(cfg config) (*results.Results, error) {
	sessions, err := loadSessions(cfg.replay)
	if err != nil {
		return nil, err
	}
	r, err := newBareRunner(cfg)
	if err != nil {
		return nil, err
	}
	defer r.close()
	// The processes must not outlive the run, even when it is interrupted.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() {
		if _, ok := <-sig; ok {
			r.close()
			os.Exit(130)
		}
	}()
	h := header(cfg)
	h.Requests = cfg.sessions
	res := &results.Results{Header: h}
	if res.Replay, err = r.runReplay(sessions); err != nil {
		return nil, err
	}
	res.Header.LoadAfter = loadavg()
	res.Header.Validated, res.Header.Errors = r.validated, r.errors
	res.Header.Binaries, res.Header.Skipped = r.binaries(), r.skipped
	return res, nil
}

// modelTag separates a model's name from the replay's turn number.
const modelTag = "-replay"

// replaySession is one recording: the turns of an agent's session.
type replaySession struct {
	name   string             // the file's base name: "claude-code"
	client translate.Protocol // the agent's protocol
	turns  []*replayTurn
}

// replayTurn is one request of a session, in both forms, and the
// upstream's answer to it.
type replayTurn struct {
	id int // the tag's number, unique in the run

	// What the agent sent louter: the path (its prefix before /v1
	// stripped), query, allowlisted headers and body.
	louterPath string
	header     http.Header
	louterBody []byte
	// What louter sent the backend: Caddy's plain proxy gets it.
	caddyPath string
	caddyBody []byte

	events [][]byte // the backend's stream, one SSE event each
}

// loadSessions reads the recordings named in files, comma-separated.
func loadSessions(files string) ([]*replaySession, error) {
	var out []*replaySession
	id := 0
	for _, f := range strings.Split(files, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		xs, err := record.ReadFile(f)
		if err != nil {
			return nil, err
		}
		s := &replaySession{name: strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))}
		for i, x := range xs {
			id++
			t, err := newReplayTurn(x, id)
			if err != nil {
				return nil, fmt.Errorf("%s: turn %d: %w", f, i+1, err)
			}
			if i == 0 {
				s.client = x.Client.Protocol
			} else if x.Client.Protocol != s.client {
				return nil, fmt.Errorf("%s: turn %d: protocol %s in a %s session", f, i+1, x.Client.Protocol, s.client)
			}
			s.turns = append(s.turns, t)
		}
		if len(s.turns) == 0 {
			return nil, fmt.Errorf("%s: no exchanges", f)
		}
		if endMarker(s.client) == nil {
			return nil, fmt.Errorf("%s: the replay cannot check a %s stream", f, s.client)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-replay %q names no recording", files)
	}
	return out, nil
}

// newReplayTurn prepares an exchange for replay, tagging its model with id.
func newReplayTurn(x *record.Exchange, id int) (*replayTurn, error) {
	if x.ClientRequest == nil || x.BackendRequest == nil || x.BackendResponse == nil {
		return nil, errors.New("the record lacks a request or the backend's response")
	}
	if x.Backend == nil || x.Backend.Protocol != translate.ProtocolOpenAIChat || !x.Stream {
		return nil, errors.New("the replay needs a streamed exchange with an openai_chat backend")
	}
	if len(x.BackendResponse.Events) == 0 {
		return nil, errors.New("the backend's response is not a stream")
	}
	tag := modelTag + strconv.Itoa(id)
	t := &replayTurn{id: id, header: http.Header{}, caddyPath: x.BackendRequest.Path}
	var err error
	if t.caddyBody, err = tagModel(x.BackendRequest.BodyBytes(), tag); err != nil {
		return nil, fmt.Errorf("backend request: %w", err)
	}
	path := x.ClientRequest.Path
	if i := strings.Index(path, "/v1"); i > 0 {
		path = path[i:] // "/anthropic/v1/messages": the e2e setup's route prefix
	}
	body := x.ClientRequest.BodyBytes()
	if m := gjson.GetBytes(body, "model"); m.Exists() {
		body, err = tagModel(body, tag)
	} else if i := strings.Index(path, ":"); i > 0 && strings.Contains(path, "/models/") {
		path = path[:i] + tag + path[i:] // Gemini: the model is in the path
	} else {
		err = errors.New("no model to tag")
	}
	if err != nil {
		return nil, fmt.Errorf("client request: %w", err)
	}
	t.louterBody = body
	t.louterPath = path
	if x.ClientRequest.Query != "" {
		t.louterPath += "?" + x.ClientRequest.Query
	}
	for k, v := range x.ClientRequest.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Connection", "Accept-Encoding":
		default:
			t.header[k] = v
		}
	}
	for _, e := range x.BackendResponse.Events {
		var b bytes.Buffer
		if e.Name != "" {
			b.WriteString("event: " + e.Name + "\n")
		}
		b.WriteString("data: ")
		b.Write(e.Payload())
		b.WriteString("\n\n")
		t.events = append(t.events, b.Bytes())
	}
	return t, nil
}

func tagModel(body []byte, tag string) ([]byte, error) {
	m := gjson.GetBytes(body, "model")
	if m.Type != gjson.String {
		return nil, errors.New("no model to tag")
	}
	return sjson.SetBytes(body, "model", m.String()+tag)
}

// turnOf is the turn whose tag ends the model of a backend request.
func turnOf(body []byte) int {
	m := gjson.GetBytes(body, "model").String()
	i := strings.LastIndex(m, modelTag)
	if i < 0 {
		return 0
	}
	n, _ := strconv.Atoi(m[i+len(modelTag):])
	return n
}

// endMarker is what a complete stream of protocol p holds.
func endMarker(p translate.Protocol) []byte {
	switch p {
	case translate.ProtocolAnthropic:
		return []byte("event: message_stop")
	case translate.ProtocolOpenAIResponses:
		return []byte("event: response.completed")
	case translate.ProtocolGemini:
		return []byte(`"finishReason"`)
	case translate.ProtocolOpenAIChat:
		return []byte("data: [DONE]")
	}
	return nil
}

// replayUpstream answers every turn of the sessions with its recorded
// backend stream.
type replayUpstream struct {
	Addr   string
	srv    *http.Server
	events map[int][][]byte
}

func startReplayUpstream(sessions []*replaySession) (*replayUpstream, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &replayUpstream{Addr: l.Addr().String(), events: map[int][][]byte{}}
	for _, s := range sessions {
		for _, t := range s.turns {
			u.events[t.id] = t.events
		}
	}
	u.srv = &http.Server{Handler: u, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = u.srv.Serve(l) }()
	return u, nil
}

func (u *replayUpstream) Close() error { return u.srv.Close() }

func (u *replayUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	events, ok := u.events[turnOf(body)]
	if !ok {
		http.Error(w, `{"error":{"message":"the replay knows no such turn","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	for _, ev := range events {
		if _, err := w.Write(ev); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// replayLoad is what one phase measured on the client side, one
// result per turn of the session.
type replayLoad []harness.LoadResult

// total is the phase's count of turns sent and failed, and the first
// error of the earliest turn that had one.
func (l replayLoad) total() harness.LoadResult {
	var t harness.LoadResult
	for _, r := range l {
		t.Requests += r.Requests
		t.Errors += r.Errors
		if t.FirstError == "" {
			t.FirstError = r.FirstError
		}
	}
	return t
}

// replaySessions sends n sessions of s, conc at a time, to base (louter
// when louter is set, else Caddy's plain proxy).
func replaySessions(client *http.Client, base string, s *replaySession, louter bool, n, conc int) replayLoad {
	tallies := make([]harness.Tally, len(s.turns))
	harness.Workers(n, conc, func(buf *bytes.Buffer) {
		for i, t := range s.turns {
			lat, ttfb, err := replayTurnOnce(client, base, s.client, t, louter, buf)
			if err != nil {
				err = fmt.Errorf("%s turn %d: %w", s.name, i+1, err)
			}
			tallies[i].Add(lat, ttfb, err)
			if err != nil {
				break // the agent would stop here too
			}
		}
	})
	res := make(replayLoad, len(tallies))
	for i := range tallies {
		res[i] = tallies[i].Result()
	}
	return res
}

// replayTurnOnce sends one turn and reads and checks its whole stream.
func replayTurnOnce(client *http.Client, base string, p translate.Protocol, t *replayTurn, louter bool, buf *bytes.Buffer) (latency, ttfb time.Duration, err error) {
	path, body, end := t.caddyPath, t.caddyBody, endMarker(translate.ProtocolOpenAIChat)
	if louter {
		path, body, end = t.louterPath, t.louterBody, endMarker(p)
	}
	req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	if louter {
		for k, v := range t.header {
			req.Header[k] = v
		}
	}
	req.Header.Set("Content-Type", "application/json")
	if latency, ttfb, err = harness.Send(client, req, buf); err != nil {
		return 0, 0, err
	}
	if !bytes.Contains(buf.Bytes(), end) {
		return 0, 0, fmt.Errorf("the stream lacks %q: …%s", end, buf.Bytes()[max(0, buf.Len()-200):])
	}
	return latency, ttfb, nil
}

// replayTargets are the two processes of the replay: Caddy's plain proxy
// and louter, both in front of the replay upstream.
func replayTargets(upstream string) (caddy, louter *target) {
	return &target{name: "caddy-replay", label: "Caddy `reverse_proxy`, the bytes louter sent the backend", site: "reverse_proxy " + upstream},
		&target{name: "louter-replay", label: "louter, the agent's requests to an OpenAI Chat backend", baseline: "caddy-replay", site: louterSite(translate.ProtocolOpenAIChat, upstream)}
}

// runReplay runs the session-replay mode: for each repetition,
// concurrency and recording, Caddy, then louter, then with -before louter
// from the older binary.
func (r *runner) runReplay(sessions []*replaySession) ([]results.Replay, error) {
	up, err := startReplayUpstream(sessions)
	if err != nil {
		return nil, err
	}
	defer up.Close()
	caddy, louter := replayTargets(up.Addr)
	r.targets = []*target{caddy, louter}
	if r.cfg.before != "" {
		r.targets = withBefore(r.targets, r.cfg.before)
	}
	defer func() {
		for _, t := range r.targets {
			r.stop(t)
		}
	}()
	for _, t := range slices.Clone(r.targets) {
		if err := r.start(t); err != nil {
			if !skippable(t) {
				return nil, err
			}
			r.skip(t, reasonOf(t, err))
		}
	}
	top := slices.Max(r.cfg.conc)
	// Warm-up: every session once per worker of the highest concurrency.
	for _, s := range sessions {
		for _, t := range slices.Clone(r.targets) {
			lr := replaySessions(r.client(top), t.base(), s, isLouter(t), top, top).total()
			if lr.Errors > 0 && skippable(t) {
				r.skip(t, fmt.Sprintf("warm-up, %s: %d of %d turns failed, the first: %s", s.name, lr.Errors, lr.Requests, lr.FirstError))
				continue
			}
			r.count(lr)
			if lr.Errors > 0 {
				return nil, fmt.Errorf("%s, %s: warm-up: %d errors, the first: %s; its log:\n%.3000s", t.name, s.name, lr.Errors, lr.FirstError, t.proc.Logs())
			}
		}
	}
	type key struct {
		session string
		conc    int
		target  string
	}
	type acc struct {
		cpu       time.Duration
		turns     int
		rss       int64
		lat, ttfb [][]time.Duration
		errors    int
	}
	accs := map[key]*acc{}
	for rep := 1; rep <= r.cfg.reps; rep++ {
		for _, c := range r.cfg.conc {
			for _, s := range sessions {
				for _, t := range r.targets {
					cpu0, err := t.proc.CPU()
					if err != nil {
						return nil, fmt.Errorf("%s: %w", t.name, err)
					}
					turns := replaySessions(r.client(c), t.base(), s, isLouter(t), r.cfg.sessions, c)
					lr := turns.total()
					cpu1, err := t.proc.CPU()
					if err != nil {
						return nil, fmt.Errorf("%s: %w", t.name, err)
					}
					rss, err := t.proc.RSS()
					if err != nil {
						return nil, err
					}
					r.count(lr)
					if lr.Errors > 0 {
						fmt.Fprintf(os.Stderr, "  %s %s: first error: %s\n", t.name, s.name, lr.FirstError)
					}
					k := key{s.name, c, t.name}
					a := accs[k]
					if a == nil {
						a = &acc{lat: make([][]time.Duration, len(s.turns)), ttfb: make([][]time.Duration, len(s.turns))}
						accs[k] = a
					}
					a.cpu += cpu1 - cpu0
					a.turns += lr.Requests
					a.rss = max(a.rss, rss)
					a.errors += lr.Errors
					for i, tr := range turns {
						a.lat[i] = append(a.lat[i], tr.Latencies...)
						a.ttfb[i] = append(a.ttfb[i], tr.TTFBs...)
					}
					fmt.Fprintf(os.Stderr, "rep %d c=%d replay %-12s %-20s %8.0f µs/turn  rss %5.1f MiB  errors %d\n",
						rep, c, s.name, t.name, float64((cpu1-cpu0).Microseconds())/float64(max(lr.Requests, 1)), mib(rss), lr.Errors)
				}
			}
		}
	}
	var out []results.Replay
	for _, c := range r.cfg.conc {
		for _, s := range sessions {
			ca, la := accs[key{s.name, c, caddy.name}], accs[key{s.name, c, louter.name}]
			for i := range s.turns {
				for _, a := range [][]time.Duration{ca.lat[i], ca.ttfb[i], la.lat[i], la.ttfb[i]} {
					slices.Sort(a)
				}
				row := results.Replay{
					Session: s.name, Client: string(s.client), Turn: i + 1, Turns: len(s.turns), Conc: c,
					RequestKB:       float64(len(s.turns[i].louterBody)) / 1024,
					CaddyTTFBms:     ms(harness.Percentile(ca.ttfb[i], 50)),
					LouterTTFBms:    ms(harness.Percentile(la.ttfb[i], 50)),
					CaddyP99ms:      ms(harness.Percentile(ca.lat[i], 99)),
					LouterP99ms:     ms(harness.Percentile(la.lat[i], 99)),
					CaddyCPUPerTurn: perTurn(ca.cpu, ca.turns), LouterCPUPerTurn: perTurn(la.cpu, la.turns),
					CaddyRSSMiB: mib(ca.rss), LouterRSSMiB: mib(la.rss),
					Samples: len(la.lat[i]), Errors: ca.errors + la.errors,
				}
				row.AddedTTFBms = row.LouterTTFBms - row.CaddyTTFBms
				row.AddedP99ms = row.LouterP99ms - row.CaddyP99ms
				if ba := accs[key{s.name, c, louter.name + beforeSuffix}]; ba != nil {
					slices.Sort(ba.lat[i])
					slices.Sort(ba.ttfb[i])
					row.BeforeTTFBms = ms(harness.Percentile(ba.ttfb[i], 50))
					row.BeforeP99ms = ms(harness.Percentile(ba.lat[i], 99))
					row.BeforeCPUPerTurn, row.BeforeRSSMiB = perTurn(ba.cpu, ba.turns), mib(ba.rss)
					row.Errors += ba.errors
				}
				out = append(out, row)
			}
		}
	}
	return out, nil
}

// perTurn is a phase's CPU per turn in µs, averaged over the session's
// turns (their sizes differ; the process CPU cannot tell them apart).
func perTurn(cpu time.Duration, turns int) float64 {
	return float64(cpu.Microseconds()) / float64(max(turns, 1))
}

// base is the target's URL without a path.
func (t *target) base() string { return fmt.Sprintf("http://127.0.0.1:%d", t.port) }

// printReplay writes the session-replay mode's table: per recording,
// turn and concurrency, louter's time to first byte and p99 over Caddy's,
// CPU per turn and RSS.
func printReplay(w io.Writer, res *results.Results) {
	h := res.Header
	fmt.Fprintf(w, "Session replay, %s, %s, %s, nproc %d, GOMAXPROCS %d, commit %s, load average %s before, %s after; %d sessions per recording, concurrency and repetition, %d repetitions; %d turns checked, %d errors.\n\n",
		h.Date, h.Go, h.CPU, h.NProc, h.GOMAXPROCS, h.Commit, h.LoadBefore, h.LoadAfter, h.Requests, h.Reps, h.Validated, h.Errors)
	fmt.Fprint(w, "| session (client) | turn | request KB | c | TTFB ms Caddy / louter | added TTFB ms | p99 ms Caddy / louter | added p99 ms | CPU µs/turn Caddy / louter | × | RSS MiB Caddy / louter |\n")
	fmt.Fprint(w, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range res.Replay {
		ratio := "–"
		if r.CaddyCPUPerTurn > 0 {
			ratio = fmt.Sprintf("%.2f", r.LouterCPUPerTurn/r.CaddyCPUPerTurn)
		}
		fmt.Fprintf(w, "| %s (%s) | %d/%d | %.0f | %d | %.2f / %.2f | %+.2f | %.2f / %.2f | %+.2f | %s / %s | %s | %.0f / %.0f |\n",
			r.Session, r.Client, r.Turn, r.Turns, r.RequestKB, r.Conc, r.CaddyTTFBms, r.LouterTTFBms, r.AddedTTFBms,
			r.CaddyP99ms, r.LouterP99ms, r.AddedP99ms, num(r.CaddyCPUPerTurn), num(r.LouterCPUPerTurn), ratio, r.CaddyRSSMiB, r.LouterRSSMiB)
	}
	printReplayBeforeAfter(w, res)
}
