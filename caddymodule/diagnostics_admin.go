package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/louter/louter/caddymodule/internal/redact"
)

func init() {
	caddy.RegisterModule(DiagnosticsAdmin{})
}

// DiagnosticsAdmin is the admin.api.louter_diagnostics module: it serves,
// on Caddy's admin endpoint at GET /louter/diagnostics, what each running
// louter handler is configured with, as JSON:
//
//	{"handlers": [{"backends": [{"name": "openai", "protocol": "openai_chat",
//	  "base_path": "/v1", "upstreams": ["api.openai.com:443"],
//	  "key_configured": true}], "routes": [{"match": "gpt-*",
//	  "backend": "openai"}]}]}
//
// Keys are never shown, only whether one is configured; a backend that
// authenticates through an auth module (aws_sigv4, google, azure) has
// "auth" set to the module's name instead, and key_configured false. With ?probe=1 each
// backend is also sent a request that needs its credential (its model
// list, GET {base_path}/models, or for Bedrock an InvokeModel of a model
// that does not exist: diagnostics_probe.go) through its own upstream
// handler, with its key or auth module, concurrently and within
// diagnosticsProbeTimeout, and its entry gets a "probe" object: reachable,
// authorized (false when the answer was 401 or 403), status, latency_ms
// and a scrubbed error. Probing is opt-in because it
// sends requests to the providers. Like every admin.api module it is
// always loaded; it needs no configuration.
type DiagnosticsAdmin struct{}

// CaddyModule returns the Caddy module information.
func (DiagnosticsAdmin) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.louter_diagnostics",
		New: func() caddy.Module { return new(DiagnosticsAdmin) },
	}
}

// Routes implements caddy.AdminRouter.
func (DiagnosticsAdmin) Routes() []caddy.AdminRoute {
	return []caddy.AdminRoute{{Pattern: "/louter/diagnostics", Handler: caddy.AdminHandlerFunc(serveDiagnostics)}}
}

// diagnosticsProbeTimeout bounds each backend probe.
const diagnosticsProbeTimeout = 5 * time.Second

// liveHandlers are the provisioned louter handlers of the running
// config(s), with the HTTP server each belongs to (reverse_proxy needs one
// in a request's context). A handler leaves when its config is unloaded.
var liveHandlers registry[liveHandler]

type liveHandler struct {
	l      *Louter
	server *caddyhttp.Server
}

// registerDiagnostics lists l for the diagnostics endpoint until its
// config is unloaded (Cleanup calls unregisterDiagnostics). Called from
// Provision. A handler provisioned outside an HTTP server (as unit tests
// do) serves nothing and is not listed: a probe through it could not run.
//
// Not ctx.OnCancel: a module's ctx is a copy of its config's, and what is
// added to the copy is never called, so a handler stayed listed after its
// config was unloaded, or failed to load (caddy validate, louter check),
// and a probe then went through its half-provisioned backends. Caddy calls
// Cleanup in all those cases.
func (l *Louter) registerDiagnostics(ctx caddy.Context) {
	srv, _ := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	if srv == nil {
		return
	}
	liveHandlers.add(liveHandler{l: l, server: srv})
}

// unregisterDiagnostics takes l off the diagnostics endpoint's list.
func (l *Louter) unregisterDiagnostics() {
	liveHandlers.removeIf(func(h liveHandler) bool { return h.l == l })
}

// diagnosticsReport is the answer of GET /louter/diagnostics.
type diagnosticsReport struct {
	Handlers []diagHandler `json:"handlers"`
}

type diagHandler struct {
	Backends []*diagBackend `json:"backends"`
	Routes   []diagRoute    `json:"routes"`
}

type diagBackend struct {
	Name           string     `json:"name"`
	Protocol       string     `json:"protocol"`
	BasePath       string     `json:"base_path"`
	Upstreams      []string   `json:"upstreams,omitempty"`
	KeyConfigured  bool       `json:"key_configured"`
	Auth           string     `json:"auth,omitempty"`
	PassClientAuth bool       `json:"pass_client_auth,omitempty"`
	Probe          *diagProbe `json:"probe,omitempty"`
}

type diagProbe struct {
	Reachable bool `json:"reachable"`
	// Authorized says, once the backend answered, whether it accepted the
	// credential: false for a 401 or 403.
	Authorized *bool  `json:"authorized,omitempty"`
	Status     int    `json:"status,omitempty"`
	LatencyMS  int64  `json:"latency_ms"`
	Error      string `json:"error,omitempty"`
}

type diagRoute struct {
	Match     string   `json:"match"`
	Backend   string   `json:"backend"`
	Rename    string   `json:"rename,omitempty"`
	Fallbacks []string `json:"fallbacks,omitempty"`
	When      int      `json:"when,omitempty"`
}

func serveDiagnostics(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: fmt.Errorf("method %s not allowed", r.Method)}
	}
	live := liveHandlers.all()

	probe := r.URL.Query().Get("probe") == "1"
	rep := diagnosticsReport{Handlers: []diagHandler{}}
	var wg sync.WaitGroup
	for _, h := range live {
		dh := describeHandler(h.l)
		if probe {
			for _, db := range dh.Backends {
				b := h.l.Backends[db.Name]
				wg.Add(1)
				go func() {
					defer wg.Done()
					db.Probe = probeBackend(r.Context(), h.server, b)
				}()
			}
		}
		rep.Handlers = append(rep.Handlers, dh)
	}
	wg.Wait()
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(rep)
}

// describeHandler lists l's backends (sorted by name) and routes, without
// any key.
func describeHandler(l *Louter) diagHandler {
	dh := diagHandler{Backends: []*diagBackend{}, Routes: []diagRoute{}}
	for name, b := range l.Backends {
		if b == nil {
			continue
		}
		dh.Backends = append(dh.Backends, &diagBackend{
			Name:           name,
			Protocol:       string(b.Protocol),
			BasePath:       b.basePath,
			Upstreams:      upstreamDials(b.upstream),
			KeyConfigured:  b.apiKey != "",
			Auth:           authName(b.auth),
			PassClientAuth: b.PassClientAuth,
		})
	}
	slices.SortFunc(dh.Backends, func(a, b *diagBackend) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	for _, m := range l.Models {
		dr := diagRoute{Match: m.Match, Backend: m.Backend, Rename: m.Rename, When: len(m.When)}
		for _, f := range m.Fallbacks {
			dr.Fallbacks = append(dr.Fallbacks, f.Backend)
		}
		dh.Routes = append(dh.Routes, dr)
	}
	return dh
}

// upstreamDials returns the dial addresses of a reverse_proxy's static
// upstreams; nil for another handler or dynamic upstreams.
func upstreamDials(h caddyhttp.MiddlewareHandler) []string {
	rp, ok := h.(*reverseproxy.Handler)
	if !ok {
		return nil
	}
	var dials []string
	for _, u := range rp.Upstreams {
		dials = append(dials, u.Dial)
	}
	return dials
}

// probeBackend sends b its probe (probeRequestFor) through its upstream
// handler with its key or auth module (never a client's credential), and
// reports whether it answered and whether the answer accepted the
// credential. Any answer, even an error status, counts as reachable; the
// error text is scrubbed of keys and addresses.
func probeBackend(parent context.Context, srv *caddyhttp.Server, b *Backend) *diagProbe {
	ctx, cancel := context.WithTimeout(parent, diagnosticsProbeTimeout)
	defer cancel()
	proto := rowOf(b.Protocol) // protocols.go
	pr := probeRequestFor(b)   // diagnostics_probe.go
	req, err := http.NewRequestWithContext(ctx, pr.method, "http://louter.invalid/", nil)
	if err != nil {
		return &diagProbe{Error: err.Error()}
	}
	req.Header.Set("Accept", "application/json")
	proto.prepareRequest(req.Header)
	if pr.body != nil {
		req.Header.Set("Content-Type", "application/json")
		setBody(req, pr.body)
	}
	setBackendPath(req.URL, b.basePath, pr.path)
	req.URL.RawQuery = pr.query
	req.RequestURI = req.URL.RequestURI()
	// The context reverse_proxy expects of a request Caddy's server
	// accepted: a replacer, vars and the server.
	req = caddyhttp.PrepareRequest(req, caddy.NewReplacer(), &bodyRecorder{header: http.Header{}}, srv)
	var cred http.Header
	if b.apiKey != "" {
		cred = make(http.Header, 1)
		proto.setKey(cred, b.apiKey)
	}
	start := time.Now()
	rec, err := callBackend(b, b.attachCredential(req, cred), maxBackendListBytes)
	p := &diagProbe{LatencyMS: time.Since(start).Milliseconds()}
	if err != nil {
		// The cause without the error ID and source line Caddy's
		// HandlerError adds; then without keys and addresses.
		if he, ok := errors.AsType[caddyhttp.HandlerError](err); ok && he.Err != nil {
			err = he.Err
		}
		p.Error = redact.ScrubString(err.Error(), []string{b.apiKey})
		return p
	}
	authorized := probeAuthorized(rec.status)
	p.Reachable, p.Status, p.Authorized = true, rec.status, &authorized
	return p
}

// authName is the name of a's module ("aws_sigv4" for
// http.handlers.louter.auth.aws_sigv4), or "" when there is none.
func authName(a BackendAuth) string {
	m, ok := a.(caddy.Module)
	if !ok {
		return ""
	}
	return m.CaddyModule().ID.Name()
}

// Interface guard
var _ caddy.AdminRouter = DiagnosticsAdmin{}
