// Package caddymodule is louter's Caddy glue: the http.handlers.louter
// middleware, which lets any coding agent talk to any LLM backend. It
// recognizes LLM API requests by path, picks a backend by the requested
// model, translates the request into the backend's protocol, hands it to the
// backend's own stock reverse_proxy, and translates the response — JSON,
// errors and live SSE streams — back into the client's protocol as it
// arrives.
//
// Everything the package knows of one protocol's HTTP side — its client
// paths, its backends' endpoints and keys, its headers, the answers louter
// writes in its shape — is that protocol's row in protocols.go; the rest
// of the package reads rows and never switches on a protocol's name. A new
// protocol is a codec in package translate and a row here.
//
// Each backend attempt is served by serveBackend (handler.go) in named
// steps, through a responseWriter (response_writer.go) that only writes.
// The gateway features that watch an attempt — tracing, recording, the
// stream timers, the fallback gate, the release of the request — are
// observers registered on the writer, each in its own file; the hooks and
// their contract are in attempt_hooks.go.
package caddymodule

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/louter/louter/caddymodule/internal/redact"
	"github.com/louter/louter/caddymodule/internal/stateful"
	"github.com/louter/louter/translate"
)

// defaultMaxRequestBody bounds a request body when max_request_body is not
// set. Coding agents send long conversations (Claude Code ~50 KB at the start,
// megabytes with images), so it is generous.
const defaultMaxRequestBody = 32 << 20

// Louter is the http.handlers.louter middleware. It answers POST requests to
// the LLM endpoints it knows, with any path prefix: /v1/messages (Anthropic
// clients), /v1/chat/completions (OpenAI Chat), /v1/responses (OpenAI
// Responses) and /v1beta/models/{model}:generateContent or
// :streamGenerateContent (Gemini, also under /v1/); token counting
// (/v1/messages/count_tokens, Gemini's :countTokens); the model lists of
// each protocol; and OpenAI's /v1/embeddings and /v1/completions (passed to
// openai_chat backends). Another method or sub-path of those APIs gets a
// 405 or 404 in the API's error shape; every request that is not an LLM
// API call goes to the next handler unchanged (surface.go says which are).
//
// For each request it reads the model, finds the first matching model route,
// and sends the request to that route's backend (or to the backend of the
// route's first condition on the request's content that holds) through the
// backend's upstream handler (a stock reverse_proxy). The request carries
// its conversation key in the X-Louter-Conversation header, for lb_policy
// header, and in the {http.louter.conversation} placeholder. When the client and the backend
// speak the same protocol, request and response bytes pass through
// untouched, except for the model rename and the max_tokens cap. Otherwise
// the request, the response, errors and streams are translated. Errors
// louter raises itself (no route, body too large, backend unreachable) are
// written in the client's protocol. A route may name fallback backends,
// tried in turn when the ones before fail before the client received any
// content (fallback.go).
//
// Each generation request is counted in louter_* Prometheus metrics in
// Caddy's metrics registry, adds louter_* fields to the access log
// (client protocol, backend, models, stream, outcome, tokens of each kind,
// time to first token, stop reason, dropped fields) and answers the same
// values as {http.louter.*} placeholders (exchange_record.go, metrics.go;
// docs/operating.md lists them), and the access log
// names the number of backends tried when a fallback was needed
// (louter_attempts).
type Louter struct {
	// The backends requests can be sent to, by name.
	Backends map[string]*Backend `json:"backends,omitempty"`

	// Model routes, tried in order: the first whose pattern matches the
	// requested model picks the backend. A request no route matches is
	// answered with 404 in the client's protocol.
	Models []ModelRoute `json:"models,omitempty"`

	// The largest request body louter reads, in bytes; larger requests are
	// answered with 413 in the client's protocol. Default: 32 MiB.
	MaxRequestBody int64 `json:"max_request_body,omitempty"`

	// The largest token counting request body louter reads, in bytes;
	// larger ones are answered with 413 in the client's protocol.
	// Counting holds several times its body in memory for as long as the
	// tokenizer runs, so it is bounded lower than other requests (see
	// count_bounds.go). Default: 8 MiB, or max_request_body when that is
	// lower.
	MaxCountBody int64 `json:"max_count_body,omitempty"`

	// How many token counting calls louter serves at once, local counts
	// and counts asked of a backend alike; a call beyond them waits up to
	// 2s for a turn, then is answered 503 with Retry-After in the client's
	// protocol. Default: the number of CPUs Go uses (GOMAXPROCS), at
	// least 4; a negative value removes the bound.
	CountConcurrency int `json:"count_concurrency,omitempty"`

	// More client request headers to send to every backend, beyond those
	// louter passes by default; see Backend.ForwardHeaders, which adds to
	// these. Headers that carry credentials cannot be listed.
	ForwardHeaders []string `json:"forward_headers,omitempty"`

	// How long a response stream may go without a byte to the client
	// before louter sends the client protocol's keep-alive (Anthropic's
	// ping event, an SSE comment for OpenAI clients; nothing for Gemini
	// clients, whose SDK rejects both). Only once the response status was
	// sent. Default: 15s; a negative value turns keep-alives off.
	KeepaliveInterval caddy.Duration `json:"keepalive_interval,omitempty"`

	// How long the backend may stay silent after its response began
	// before louter cancels the upstream request and ends the response
	// with an error in the client's protocol (an error event mid-stream).
	// Default: 5m; a negative value turns the limit off.
	StreamIdleTimeout caddy.Duration `json:"stream_idle_timeout,omitempty"`

	// How long the backend may take to begin its response (its status
	// line) before louter cancels the upstream request and answers 504 in
	// the client's protocol. A non-streaming response begins only when it
	// is complete, so this bounds whole answers too. Default: off (zero or
	// negative). When a model route has fallbacks and another backend may
	// still take over, the limit also runs until a stream's first content
	// event, and a backend that passes it is left for the next one.
	FirstByteTimeout caddy.Duration `json:"first_byte_timeout,omitempty"`

	// How long a model list request waits for the backends with
	// list_models passthrough, asked all at once; a backend that has not
	// answered by then is left out of that list (and logged). A backend's
	// list is kept for 30s, per client credential with pass_client_auth.
	// Default: 5s; a negative value waits as long as the client does.
	ListModelsTimeout caddy.Duration `json:"list_models_timeout,omitempty"`

	// What louter does with a request that is not a call to one of its
	// APIs (a mistyped path such as /v1/message or /messages, or /):
	// "next" (the default) passes it to the site's next handler, so louter
	// can share a site with others; "not_found" answers it with a 404 in
	// an API's error shape (Anthropic's when the request carries
	// anthropic-version, else OpenAI's unknown_url), for a site louter
	// serves alone. OPTIONS requests always go to the next handler.
	UnknownPaths string `json:"unknown_paths,omitempty"`

	// Client keys, limits and prices (client_keys.go).
	ClientAccess

	// Record every chat exchange to JSON Lines files (record_config.go).
	Record *RecordConfig `json:"record,omitempty"`

	// Stored responses, the Responses WebSocket and compaction
	// (internal/stateful). Unset: on, in memory (or in the redis server of
	// the limits when one is configured), with the defaults.
	State *StoredResponses `json:"stored_responses,omitempty"`

	logger  *zap.Logger
	metrics *louterMetrics // metrics.go
	// cooldowns skips backends of fallback chains that rate-limited or
	// kept failing (fallback_cooldown.go).
	cooldowns *cooldowns
	access    *access // nil when no key, identity or route limit is configured

	// recording is nil unless record is set (record_config.go).
	recording *recording

	// stateful is the stateful layer (internal/stateful), nil until Provision.
	stateful *stateful.Layer

	// watchers start the observers of features other than louter's own
	// (attempt_hooks.go), on every attempt.
	watchers []attemptWatcher

	// answerers may answer a routed chat request in place of its backend
	// (answerer.go), asked in order.
	answerers []namedAnswerer

	// The token counting bounds (count_bounds.go): the body limit in
	// force, the slots of the calls in progress (nil: no bound) and how
	// long a call waits for one.
	maxCountBody int64
	countSlots   chan struct{}
	countWait    time.Duration

	// The model list's deadline in force and the backends' lists
	// (models_fanout.go).
	listTimeout time.Duration
	listCache   *listCache
}

// CaddyModule returns the Caddy module information.
func (Louter) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.louter",
		New: func() caddy.Module { return new(Louter) },
	}
}

// Provision sets up the backends: it resolves their API keys, looks up
// their codecs and loads their upstream handlers.
func (l *Louter) Provision(ctx caddy.Context) error {
	l.logger = ctx.Logger()
	if l.MaxRequestBody == 0 {
		l.MaxRequestBody = defaultMaxRequestBody
	}
	l.provisionStreamTimers()
	l.provisionCounting() // count_bounds.go
	l.provisionListing()  // models_fanout.go
	m, err := registerMetrics(ctx.GetMetricsRegistry())
	if err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	l.metrics = m

	repl := caddy.NewReplacer()
	for name, b := range l.Backends {
		if b == nil {
			continue // reported by Validate
		}
		b.name = name
		b.apiKey = repl.ReplaceAll(b.APIKey, "")
		if b.apiKey != "" && b.apiKey == b.APIKey {
			// The key is in the JSON config, which Caddy autosaves and
			// serves on its admin endpoint.
			l.logger.Warn("api_key is written in the configuration; use a placeholder such as {env.API_KEY}", zap.String("backend", name))
		}
		b.basePath = normalizeBasePath(b.BasePath)
		row := rowOf(b.Protocol) // protocols.go
		if b.BasePath == "" && row.defaultBasePath != "" {
			b.basePath = normalizeBasePath(row.defaultBasePath) // "/": the root
		}
		b.forwardHeaders = headerSet(append(slices.Clone(l.ForwardHeaders), b.ForwardHeaders...)...)
		if _, _, ok := servedProtocol(b.Protocol); ok { // an unknown protocol is reported by Validate
			b.codec, _ = translate.BackendCodec(b.Protocol, b.Dialect)
		}
		if row.configure != nil {
			if err := row.configure(b); err != nil {
				return fmt.Errorf("backend %q: %w", name, err)
			}
		}
		if len(b.UpstreamRaw) == 0 && row.defaultUpstream != nil {
			raw, err := row.defaultUpstream(b)
			if err != nil {
				return fmt.Errorf("backend %q: %w", name, err)
			}
			b.UpstreamRaw = raw
		}
		if len(b.UpstreamRaw) == 0 {
			continue // reported by Validate
		}
		mod, err := ctx.LoadModule(b, "UpstreamRaw")
		if err != nil {
			return fmt.Errorf("backend %q: loading upstream handler: %w", name, err)
		}
		h, ok := mod.(caddyhttp.MiddlewareHandler)
		if !ok {
			return fmt.Errorf("backend %q: upstream module %T is not an HTTP handler", name, mod)
		}
		b.upstream = h
		b.credentialTransport = wrapTransport(mod)
		b.conversationHeader = hashesConversation(mod) // conversation_key.go
		if row.responseFraming != nil && !b.credentialTransport {
			return fmt.Errorf("backend %q: protocol %s needs a reverse_proxy upstream, whose transport re-frames its streams", name, b.Protocol)
		}
		if len(b.AuthRaw) > 0 {
			if err := b.provisionAuth(ctx); err != nil {
				return fmt.Errorf("backend %q: %w", name, err)
			}
		}
		if !b.credentialTransport && b.auth == nil {
			l.logger.Warn("the upstream handler is not a reverse_proxy: the backend's key is set on the request, where the handler's own logs can see it", zap.String("backend", name))
		}
	}

	for i := range l.Models {
		l.Models[i].backend = l.Backends[l.Models[i].Backend]
	}
	l.provisionFallbacks()  // fallback.go
	l.provisionConditions() // route_conditions.go
	l.warnUnsetKeys()
	if err := l.provisionRecord(ctx); err != nil {
		return err // record_config.go
	}
	// The usage page's recent errors and traffic (ops_feed.go).
	l.watchers = append(l.watchers, l.watchOps)
	l.provisionFeatures()      // registered answerers and watchers (answerer.go)
	l.registerDiagnostics(ctx) // diagnostics_admin.go
	if err := l.provisionAccess(ctx); err != nil {
		return err // client_keys.go
	}
	return l.provisionState() // stateful_host.go
}

// normalizeBasePath turns a configured base path into "" or "/a/b": unset
// means the protocols' usual /v1, "/" means the root.
func normalizeBasePath(p string) string {
	if p == "" {
		return "/v1"
	}
	p = strings.Trim(p, "/")
	if p == "" {
		return ""
	}
	return "/" + p
}

// Validate checks that every route names a configured backend and that
// every backend speaks a known protocol and has an upstream.
func (l *Louter) Validate() error {
	var errs []error
	if l.MaxRequestBody < 0 {
		errs = append(errs, fmt.Errorf("max_request_body must not be negative"))
	}
	if l.UnknownPaths != "" && l.UnknownPaths != unknownPathsNext && l.UnknownPaths != unknownPathsNotFound {
		errs = append(errs, fmt.Errorf("unknown_paths %q: want %s or %s", l.UnknownPaths, unknownPathsNext, unknownPathsNotFound))
	}
	for _, fh := range l.ForwardHeaders {
		if redact.IsCredentialHeader(fh) {
			errs = append(errs, fmt.Errorf("forward_headers cannot pass %s, a credential header (use pass_client_auth)", fh))
		}
	}
	for name, b := range l.Backends {
		if b == nil {
			errs = append(errs, fmt.Errorf("backend %q: empty definition", name))
			continue
		}
		if b.codec == nil {
			errs = append(errs, fmt.Errorf("backend %q: unknown protocol %q (known: %s)", name, b.Protocol, knownProtocols()))
		} else if rowOf(b.Protocol).endpoint == nil {
			errs = append(errs, fmt.Errorf("backend %q: protocol %q cannot be used for backends yet", name, b.Protocol))
		}
		if b.upstream == nil {
			errs = append(errs, fmt.Errorf("backend %q: no upstream handler (e.g. \"upstream\": {\"handler\": \"reverse_proxy\", ...})", name))
		}
		for _, fh := range b.ForwardHeaders {
			if redact.IsCredentialHeader(fh) {
				errs = append(errs, fmt.Errorf("backend %q: forward_headers cannot pass %s, a credential header (use pass_client_auth)", name, fh))
			}
		}
		if b.MaxTokens < 0 {
			errs = append(errs, fmt.Errorf("backend %q: max_tokens must not be negative", name))
		}
		errs = append(errs, b.validateVersions(name)...)       // anthropic_agents.go
		errs = append(errs, b.validateContextEditing(name)...) // context_editing.go
		if !translate.KnownServerToolPolicy(b.ServerTools) {
			errs = append(errs, fmt.Errorf("backend %q: server_tools %q: want auto, reject, drop or none", name, b.ServerTools))
		}
		for _, check := range []func(*Backend) error{checkVertexSettings, checkAzureSettings} { // vertex.go, azure.go
			if err := check(b); err != nil {
				errs = append(errs, fmt.Errorf("backend %q: %w", name, err))
			}
		}
		if b.Dialect != nil {
			if !takesDialect(b.Protocol) {
				errs = append(errs, fmt.Errorf("backend %q: dialect applies to %s backends only, not %q", name, dialectProtocols(), b.Protocol))
			}
			if err := b.Dialect.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("backend %q: %w", name, err))
			}
		}
	}
	errs = append(errs, l.validateListing()...)    // models_passthrough.go
	errs = append(errs, l.validateAliases()...)    // model_aliases.go
	errs = append(errs, l.validateCounting()...)   // count_bounds.go
	errs = append(errs, l.validateConditions()...) // route_conditions.go
	for i, m := range l.Models {
		if m.Match == "" {
			errs = append(errs, fmt.Errorf("model route %d: empty match pattern", i))
		}
		if m.backend == nil {
			errs = append(errs, fmt.Errorf("model route %d (%q): unknown backend %q", i, m.Match, m.Backend))
		}
		errs = append(errs, m.validateFallbacks(i)...) // fallback.go
	}
	return errors.Join(errs...)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Louter)(nil)
	_ caddy.Validator             = (*Louter)(nil)
	_ caddyhttp.MiddlewareHandler = (*Louter)(nil)
	_ caddyfile.Unmarshaler       = (*Louter)(nil)
)
