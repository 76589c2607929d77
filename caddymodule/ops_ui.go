package caddymodule

import (
	"bufio"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/record"
)

func init() {
	caddy.RegisterModule(UsagePage{})
	httpcaddyfile.RegisterHandlerDirective("louter_ui", func(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
		h.Next() // the directive's name
		if h.NextArg() {
			return nil, h.ArgErr()
		}
		return UsagePage{}, nil
	})
	httpcaddyfile.RegisterDirectiveOrder("louter_ui", httpcaddyfile.Before, "file_server")
}

// UsagePage is the http.handlers.louter_ui handler (Caddyfile: louter_ui):
// the usage page. It shows spend by client and model (the ledger, as
// GET /louter/usage on the admin endpoint reports it), requests, errors
// and tokens by client, model and backend per minute over the last hour,
// each backend's fallback cooldowns per model, the recent failed and fallen-back
// attempts (ops_feed.go), and the last recorded exchanges side by side
// (client request, backend request, backend events, client events) when
// record is configured.
//
// It is a handler the operator mounts on a site of their choosing, behind
// their own authentication (basic_auth, forward_auth, a loopback-only
// listener), not a page on Caddy's admin endpoint: the admin API refuses
// every request a browser makes by navigation (it requires an Origin or
// Referer header from a request that carries Sec-Fetch-Mode, a defence
// against cross-site requests), so a page there cannot be opened in a
// browser at all. The handler answers, under whatever path it is mounted:
//
//	.../             the page (index.html), and app.js, app.css beside it
//	.../api/state    the state above as JSON
//	.../api/usage    the ledger, as GET /louter/usage answers it
//
// and 404 for anything else. The page is static files embedded in the
// binary (no build step, nothing fetched at run time), rendered by a small
// script that reads the two JSON answers. Nothing it serves holds a key:
// the ops feed keeps names and counts, and recordings are redacted when
// written (record_config.go). It needs no configuration.
type UsagePage struct{}

//go:embed ui
var uiFiles embed.FS

// usageSource answers the ledger's report as JSON; the page reads it as
// GET /louter/usage answers it (ledger_admin.go).
var usageSource func(w http.ResponseWriter, r *http.Request) error = serveUsage

// CaddyModule returns the Caddy module information.
func (UsagePage) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.louter_ui",
		New: func() caddy.Module { return new(UsagePage) },
	}
}

// uiAssets are the files the page is made of, by the last element of the
// request path ("" is the page itself).
var uiAssets = map[string]string{"": "ui/index.html", "index.html": "ui/index.html", "app.js": "ui/app.js", "app.css": "ui/app.css"}

// ServeHTTP implements caddyhttp.MiddlewareHandler. The page is terminal:
// it never calls next.
func (UsagePage) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		return caddyhttp.Error(http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed", r.Method))
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	p := r.URL.Path
	api := strings.HasSuffix(p, "/api/state") || strings.HasSuffix(p, "/api/usage")
	if api && r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		return caddyhttp.Error(http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed", r.Method))
	}
	switch {
	case strings.HasSuffix(p, "/api/state"):
		return serveUIState(w, r)
	case strings.HasSuffix(p, "/api/usage"):
		return usageSource(w, r)
	}
	last := p[strings.LastIndexByte(p, '/')+1:]
	name, ok := uiAssets[last]
	if !ok {
		return caddyhttp.Error(http.StatusNotFound, fmt.Errorf("no such page: %s", p))
	}
	body, err := uiFiles.ReadFile(name)
	if err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, err)
	}
	switch path.Ext(name) {
	case ".html":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self'")
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	}
	_, err = w.Write(body)
	return err
}

// uiState is the answer of GET /louter/ui/api/state.
type uiState struct {
	Now        time.Time    `json:"now"`
	Backends   []uiBackend  `json:"backends"`
	Events     []opsEvent   `json:"events"`
	Series     []opsPoint   `json:"series"`
	Recordings []uiExchange `json:"recordings"`
	// RecordingDirs are the record directories of the running handlers;
	// none when recording is off.
	RecordingDirs []string `json:"recording_dirs"`
}

// uiBackend is a backend's state: its fallback cooldowns, if any.
type uiBackend struct {
	Name       string `json:"name"`
	Protocol   string `json:"protocol"`
	InFallback bool   `json:"in_fallback"` // some route may fall back from or to it (cooldowns apply)
	// The models asked of it with a cooldown record (cooldowns are per pair).
	Models []uiCooldown `json:"models"`
}

// uiCooldown is one backend and model pair's cooldown record.
type uiCooldown struct {
	Model         string     `json:"model"`
	CoolingUntil  *time.Time `json:"cooling_until,omitempty"`
	FailuresInRow int        `json:"failures_in_row"`
}

// uiRecordings bounds the recorded exchanges the page gets, and
// uiRecordTail how much of the newest file is read for them.
const (
	uiRecordings    = 20
	uiRecordTail    = 8 << 20
	uiMaxRecordLine = 1 << 20 // a larger record is listed without its bodies
)

// uiExchange is a recorded exchange, or its summary when too large.
type uiExchange struct {
	*record.Exchange
	Omitted string `json:"omitted,omitempty"`
}

func serveUIState(w http.ResponseWriter, _ *http.Request) error {
	now := time.Now()
	st := uiState{Now: now, Backends: []uiBackend{}, Recordings: []uiExchange{}, RecordingDirs: []string{}}
	st.Events, st.Series = opsFeed.snapshot(now)

	for _, h := range liveHandlers.all() {
		l := h.l
		names := make([]string, 0, len(l.Backends))
		for name := range l.Backends {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if l.Backends[name] == nil {
				continue
			}
			b := uiBackend{Name: name, Protocol: string(l.Backends[name].Protocol), InFallback: l.cooldowns != nil, Models: []uiCooldown{}}
			if l.cooldowns != nil {
				b.Models = l.cooldowns.of(name)
			}
			st.Backends = append(st.Backends, b)
		}
		if l.recording != nil && !slices.Contains(st.RecordingDirs, l.recording.dir) {
			st.RecordingDirs = append(st.RecordingDirs, l.recording.dir)
		}
	}
	for _, dir := range st.RecordingDirs {
		st.Recordings = append(st.Recordings, tailRecordings(dir, uiRecordings)...)
	}
	if len(st.Recordings) > uiRecordings {
		st.Recordings = st.Recordings[len(st.Recordings)-uiRecordings:]
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	return json.NewEncoder(w).Encode(st)
}

// of returns the cooldown records of a backend's models, by model name.
func (c *cooldowns) of(backend string) []uiCooldown {
	c.mu.Lock()
	defer c.mu.Unlock()
	out, now := []uiCooldown{}, c.now()
	for k, h := range c.m {
		if k.backend == backend {
			rec := uiCooldown{Model: k.model, FailuresInRow: h.failures, CoolingUntil: new(time.Time)}
			if *rec.CoolingUntil = h.until; !now.Before(h.until) {
				rec.CoolingUntil = nil
			}
			out = append(out, rec)
		}
	}
	slices.SortFunc(out, func(a, b uiCooldown) int { return strings.Compare(a.Model, b.Model) })
	return out
}

// tailRecordings reads the last n exchanges of the newest recording file
// in dir, from at most its last uiRecordTail bytes. Errors leave the list
// empty: the page says when recording is on but nothing was read.
func tailRecordings(dir string, n int) []uiExchange {
	files, err := record.Files(dir)
	if err != nil || len(files) == 0 {
		return nil
	}
	f, err := os.Open(files[len(files)-1])
	if err != nil {
		return nil
	}
	defer f.Close()
	partial := false
	if fi, err := f.Stat(); err == nil && fi.Size() > uiRecordTail {
		if _, err := f.Seek(fi.Size()-uiRecordTail, io.SeekStart); err != nil {
			return nil
		}
		partial = true
	}
	var out []uiExchange
	br := bufio.NewReader(f)
	for first := true; ; first = false {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// Longer than the reader's buffer: read the rest and judge it
			// whole (line is the reader's buffer: copy it first).
			line = slices.Clone(line)
			var rest []byte
			rest, err = readLineRest(br)
			line = append(line, rest...)
		}
		if len(line) > 0 && !(first && partial) {
			if x := decodeRecordLine(line); x != nil {
				out = append(out, *x)
				if len(out) > n {
					out = out[1:]
				}
			}
		}
		if err != nil {
			return out
		}
	}
}

func readLineRest(br *bufio.Reader) ([]byte, error) {
	var rest []byte
	for {
		chunk, err := br.ReadSlice('\n')
		rest = append(rest, chunk...)
		if err != bufio.ErrBufferFull {
			return rest, err
		}
	}
}

// decodeRecordLine reads one record; a record past uiMaxRecordLine is
// kept as a summary without bodies or events.
func decodeRecordLine(line []byte) *uiExchange {
	var x record.Exchange
	if err := json.Unmarshal(line, &x); err != nil || x.Version == 0 {
		return nil
	}
	if len(line) <= uiMaxRecordLine {
		return &uiExchange{Exchange: &x}
	}
	x.ClientRequest, x.BackendRequest, x.BackendResponse, x.ClientResponse = nil, nil, nil, nil
	return &uiExchange{Exchange: &x, Omitted: fmt.Sprintf("a record of %d bytes: read it with caddy louter replay", len(line))}
}

// Interface guard
var _ caddyhttp.MiddlewareHandler = UsagePage{}
