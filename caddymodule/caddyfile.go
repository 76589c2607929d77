package caddymodule

import (
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"github.com/dustin/go-humanize"

	"github.com/louter/louter/translate"
)

func init() {
	caddy.RegisterModule(Louter{})
	httpcaddyfile.RegisterHandlerDirective("louter", parseCaddyfile)
	// louter rewrites the request for the backend and translates the
	// response, so it must run inside encode, the auth directives and
	// handle blocks, and before (outside) reverse_proxy.
	httpcaddyfile.RegisterDirectiveOrder("louter", httpcaddyfile.Before, "reverse_proxy")
}

// parseCaddyfile parses the louter directive. Unlike UnmarshalCaddyfile it
// has the adapter's helper, which reverse_proxy needs to build
// handle_response routes.
func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	l := new(Louter)
	if err := l.unmarshalCaddyfile(h.Dispenser, &h); err != nil {
		return nil, err
	}
	return l, nil
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax
// (docs/configuration.md has every setting; a block marked "see X" is
// parsed by X's own unmarshaler):
//
//	louter [<matcher>] {
//	    max_request_body    <size>
//	    max_count_body      <size>
//	    count_concurrency   <n>|off
//	    forward_headers     <header...>
//	    unknown_paths       next|not_found
//	    keepalive_interval  <duration>|off
//	    stream_idle_timeout <duration>|off
//	    first_byte_timeout  <duration>|off
//	    list_models_timeout <duration>|off
//	    backend <name> {
//	        protocol            anthropic|openai_chat|openai_responses|gemini|gemini_interactions|
//	                            bedrock|bedrock_converse|vertex_anthropic|vertex_gemini|
//	                            azure_openai|azure_openai_responses
//	        api_key             <key>
//	        pass_client_auth
//	        auth <method> {...}          see the auth modules (BackendAuth)
//	        forward_headers     <header...>
//	        base_path           <path>
//	        max_tokens          <n>
//	        anthropic_version   <version>
//	        drop_betas          <beta...>
//	        server_tools        auto|<policy>
//	        keep_billing_header
//	        context_management  <mode>
//	        list_models         passthrough
//	        dialect [{
//	            tool_calls           auto|native|hermes|qwen3_coder
//	            reasoning            auto|fields|think|harmony
//	            reasoning_history    reasoning_content|reasoning
//	            tools_in_prompt
//	            max_tokens_field     max_completion_tokens|max_tokens
//	            drop_params          <param...>
//	            keep_tool_ids
//	            max_tool_name_length <n>
//	        }]
//	        vertex {...}                 see unmarshalVertex (vertex.go)
//	        azure {...}                  see unmarshalAzure (azure.go)
//	        reverse_proxy    [<upstreams...>] {
//	            <reverse_proxy subdirectives...>
//	        }
//	    }
//	    model <pattern> <backend> [<rename>] [{
//	        list     <model...>
//	        alias    <name...>
//	        fallback <backend> [<rename>]
//	        when     <test> [and <test>...] <backend> [<rename>]
//	        requests|tokens|concurrent|budget|budget_alert ...   see Limits
//	    }]
//	    client|identity|price|redis|managed_keys|alert_webhook ...   see ClientAccess
//	    record {...}                     see record_config.go
//	    stored_responses {...}           see internal/stateful/caddyfile.go
//	}
//
// backend may appear any number of times, each with its own name; protocol
// and reverse_proxy are required in it. The reverse_proxy segment is the
// stock reverse_proxy directive with all its subdirectives (lb_policy,
// health_uri, transport, header_up, lb_retries, request_buffers, ...).
// handle_response blocks in it need the Caddyfile adapter (the louter
// directive); UnmarshalCaddyfile alone cannot build their routes.
//
// dialect (openai_chat backends only) describes a self-hosted
// OpenAI-compatible server; see translate.Dialect for each setting. A bare
// "dialect" keeps every default but makes OpenAI Chat clients go through
// the translation too, so they get the parsed tool calls and reasoning.
//
// model routes are tried in order; the first whose pattern matches the
// requested model wins. In patterns '*' matches any run of characters.
// A route's list names models the model lists (GET /v1/models, Gemini's
// GET /v1beta/models) show for it, for a glob pattern, which lists
// nothing by itself; list may repeat. list_models passthrough adds the
// backend's own list, asked at each list request. fallback names a backend
// to try when the ones before it fail before the client got any content,
// with the model name to ask it for; it may repeat, and the backends are
// tried in the order written (see ModelRoute.Fallbacks).
// when lines send the request to another backend when its content says so
// (images, tokens > n, thinking, tools, tool <name>, client <protocol>,
// header <name> <glob>); they are tried in order, the first that holds wins
// (see unmarshalWhen), and a backend a when line chose serves without the
// route's fallbacks.
//
// Use {env.VAR} in api_key to read the key from the environment when the
// configuration loads, or {$VAR} to substitute it when the Caddyfile is
// adapted.
func (l *Louter) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return l.unmarshalCaddyfile(d, nil)
}

func (l *Louter) unmarshalCaddyfile(d *caddyfile.Dispenser, h *httpcaddyfile.Helper) error {
	d.Next() // consume the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	var modelLines []routeLines // where each model route was written
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "max_request_body":
			var size string
			if !d.AllArgs(&size) {
				return d.ArgErr()
			}
			if l.MaxRequestBody != 0 {
				return d.Err("max_request_body already specified")
			}
			n, err := humanize.ParseBytes(size)
			if err != nil || n == 0 || n > 1<<62 {
				return d.Errf("invalid max_request_body %q", size)
			}
			l.MaxRequestBody = int64(n)
		case "max_count_body":
			var size string
			if !d.AllArgs(&size) {
				return d.ArgErr()
			}
			if l.MaxCountBody != 0 {
				return d.Err("max_count_body already specified")
			}
			n, err := humanize.ParseBytes(size)
			if err != nil || n == 0 || n > 1<<62 {
				return d.Errf("invalid max_count_body %q", size)
			}
			l.MaxCountBody = int64(n)
		case "count_concurrency":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			if l.CountConcurrency != 0 {
				return d.Err("count_concurrency already specified")
			}
			n, err := strconv.Atoi(v)
			switch {
			case v == "off":
				l.CountConcurrency = -1
			case err != nil || n <= 0:
				return d.Errf("invalid count_concurrency %q: want a positive integer or off", v)
			default:
				l.CountConcurrency = n
			}

		case "forward_headers":
			names := d.RemainingArgs()
			if len(names) == 0 {
				return d.ArgErr()
			}
			l.ForwardHeaders = append(l.ForwardHeaders, names...)
		case "unknown_paths":
			if !d.AllArgs(&l.UnknownPaths) {
				return d.ArgErr()
			}
			if l.UnknownPaths != unknownPathsNext && l.UnknownPaths != unknownPathsNotFound {
				return d.Errf("invalid unknown_paths %q: want %s or %s", l.UnknownPaths, unknownPathsNext, unknownPathsNotFound)
			}
		case "keepalive_interval":
			if err := unmarshalStreamTimer(d, &l.KeepaliveInterval); err != nil {
				return err
			}
		case "stream_idle_timeout":
			if err := unmarshalStreamTimer(d, &l.StreamIdleTimeout); err != nil {
				return err
			}
		case "list_models_timeout":
			if err := unmarshalStreamTimer(d, &l.ListModelsTimeout); err != nil {
				return err
			}
		case "first_byte_timeout":
			if err := unmarshalStreamTimer(d, &l.FirstByteTimeout); err != nil {
				return err
			}

		case "backend":
			if err := l.unmarshalBackend(d, h); err != nil {
				return err
			}

		case "model":
			at := routeLines{model: d.Token()}
			args := d.RemainingArgs()
			if len(args) < 2 || len(args) > 3 {
				return d.ArgErr()
			}
			route := ModelRoute{Match: args[0], Backend: args[1]}
			if len(args) == 3 {
				route.Rename = args[2]
			}
			if err := unmarshalRouteBlock(d, &route, &at); err != nil {
				return err
			}
			l.Models = append(l.Models, route)
			modelLines = append(modelLines, at)

		case "client", "identity", "price", "redis", "managed_keys", "alert_webhook":
			if err := l.ClientAccess.unmarshalCaddyfile(d); err != nil { // client_keys_caddyfile.go
				return err
			}

		case "record":
			if err := l.unmarshalRecord(d); err != nil { // record_config.go
				return err
			}
		case "stored_responses":
			if l.State != nil {
				return d.Err("stored_responses already specified")
			}
			l.State = new(StoredResponses)
			if err := l.State.UnmarshalCaddyfile(d); err != nil { // internal/stateful/caddyfile.go
				return err
			}

		default:
			return d.Errf("unrecognized louter subdirective '%s'", d.Val())
		}
	}
	return l.checkModelBackends(modelLines)
}

// unmarshalRouteBlock parses the optional block of a model route; the
// dispenser is on the route's last argument. at gets the lines of its
// when conditions.
func unmarshalRouteBlock(d *caddyfile.Dispenser, route *ModelRoute, at *routeLines) error {
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "list":
			names := d.RemainingArgs()
			if len(names) == 0 {
				return d.ArgErr()
			}
			route.List = append(route.List, names...)
		case "alias":
			names := d.RemainingArgs()
			if len(names) == 0 {
				return d.ArgErr()
			}
			route.Aliases = append(route.Aliases, names...)
		case "fallback":
			if err := unmarshalFallback(d, route); err != nil { // caddyfile_fallback.go
				return err
			}
		case "when":
			at.when = append(at.when, d.Token())
			c, err := unmarshalWhen(d) // route_conditions_caddyfile.go
			if err != nil {
				return err
			}
			route.When = append(route.When, c)
		case "requests", "tokens", "concurrent", "budget", "budget_alert":
			if route.Limits == nil {
				route.Limits = new(Limits)
			}
			if err := route.Limits.unmarshalCaddyfile(d); err != nil { // client_keys_caddyfile.go
				return err
			}
		default:
			return d.Errf("unrecognized louter model subdirective '%s'", d.Val())
		}
	}
	return nil
}

// unmarshalBackend parses a backend block; the dispenser is on "backend".
func (l *Louter) unmarshalBackend(d *caddyfile.Dispenser, h *httpcaddyfile.Helper) error {
	var name string
	if !d.NextArg() {
		return d.ArgErr()
	}
	name = d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	if _, dup := l.Backends[name]; dup {
		return d.Errf("backend '%s' defined twice", name)
	}
	b := new(Backend)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "protocol":
			var p string
			if !d.AllArgs(&p) {
				return d.ArgErr()
			}
			b.Protocol = translate.Protocol(p)
			if err := checkBackendProtocol(b); err != nil {
				return d.Errf("backend '%s': %v", name, err)
			}

		case "api_key":
			if !d.AllArgs(&b.APIKey) {
				return d.ArgErr()
			}

		case "pass_client_auth":
			if d.NextArg() {
				return d.ArgErr()
			}
			b.PassClientAuth = true

		case "forward_headers":
			names := d.RemainingArgs()
			if len(names) == 0 {
				return d.ArgErr()
			}
			b.ForwardHeaders = append(b.ForwardHeaders, names...)

		case "base_path":
			if !d.AllArgs(&b.BasePath) {
				return d.ArgErr()
			}

		case "max_tokens":
			var s string
			if !d.AllArgs(&s) {
				return d.ArgErr()
			}
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 {
				return d.Errf("invalid max_tokens %q: want a positive integer", s)
			}
			b.MaxTokens = n

		case "anthropic_version":
			if !d.AllArgs(&b.AnthropicVersion) {
				return d.ArgErr()
			}

		case "drop_betas":
			betas := d.RemainingArgs()
			if len(betas) == 0 {
				return d.ArgErr()
			}
			b.DropBetas = append(b.DropBetas, betas...)

		case "server_tools":
			var p string
			if !d.AllArgs(&p) {
				return d.ArgErr()
			}
			if p == "auto" {
				p = ""
			}
			b.ServerTools = translate.ServerToolPolicy(p)

		case "keep_billing_header":
			if d.NextArg() {
				return d.ArgErr()
			}
			b.KeepBillingHeader = true

		case "context_management":
			if !d.AllArgs(&b.ContextManagement) {
				return d.ArgErr()
			}

		case "list_models":
			if !d.AllArgs(&b.ListModels) {
				return d.ArgErr()
			}
			if b.ListModels != listModelsPassthrough {
				return d.Errf("backend '%s': list_models must be '%s'", name, listModelsPassthrough)
			}

		case "dialect":
			if b.Dialect != nil {
				return d.Errf("backend '%s': dialect already specified", name)
			}
			dl, err := unmarshalDialect(d)
			if err != nil {
				return err
			}
			b.Dialect = dl
			if err := checkBackendProtocol(b); err != nil {
				return d.Errf("backend '%s': %v", name, err)
			}

		case "auth":
			if b.AuthRaw != nil {
				return d.Errf("backend '%s': auth already specified", name)
			}
			raw, err := unmarshalBackendAuth(d)
			if err != nil {
				return err
			}
			b.AuthRaw = raw

		case "vertex":
			if b.Vertex != nil {
				return d.Errf("backend '%s': vertex already specified", name)
			}
			v, err := unmarshalVertex(d) // vertex.go
			if err != nil {
				return err
			}
			b.Vertex = v

		case "azure":
			if b.Azure != nil {
				return d.Errf("backend '%s': azure already specified", name)
			}
			a, err := unmarshalAzure(d) // azure.go
			if err != nil {
				return err
			}
			b.Azure = a

		case "reverse_proxy":
			if b.UpstreamRaw != nil {
				return d.Errf("backend '%s': reverse_proxy already specified", name)
			}
			raw, err := unmarshalReverseProxy(d, h)
			if err != nil {
				return err
			}
			b.UpstreamRaw = raw

		default:
			return d.Errf("unrecognized louter backend subdirective '%s'", d.Val())
		}
	}
	if b.Protocol == "" {
		return d.Errf("backend '%s': protocol is required", name)
	}
	if b.UpstreamRaw == nil && rowOf(b.Protocol).defaultUpstream == nil {
		return d.Errf("backend '%s': reverse_proxy is required", name)
	}
	if l.Backends == nil {
		l.Backends = make(map[string]*Backend)
	}
	l.Backends[name] = b
	return nil
}

// unmarshalReverseProxy parses a nested reverse_proxy segment with the
// stock parser and returns its JSON module object; the dispenser is on
// "reverse_proxy".
func unmarshalReverseProxy(d *caddyfile.Dispenser, h *httpcaddyfile.Helper) ([]byte, error) {
	seg := d.NextSegment()
	if h == nil {
		for _, tok := range seg {
			if tok.Text == "handle_response" {
				return nil, d.Err("handle_response in louter's reverse_proxy needs the Caddyfile adapter (the louter directive)")
			}
		}
	}
	rp := new(reverseproxy.Handler)
	if err := rp.UnmarshalCaddyfile(caddyfile.NewDispenser(seg)); err != nil {
		return nil, err
	}
	if h != nil {
		// Without this, handle_response blocks are silently dropped.
		if err := rp.FinalizeUnmarshalCaddyfile(*h); err != nil {
			return nil, err
		}
	}
	var warnings []caddyconfig.Warning
	raw := caddyconfig.JSONModuleObject(rp, "handler", "reverse_proxy", &warnings)
	if len(warnings) > 0 {
		return nil, d.Errf("encoding reverse_proxy: %s", warnings[0].Message)
	}
	return raw, nil
}

// unmarshalDialect parses a dialect block; the dispenser is on "dialect".
// Values are checked by translate.Dialect.Validate at provisioning, which
// names the allowed ones.
func unmarshalDialect(d *caddyfile.Dispenser) (*translate.Dialect, error) {
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	dl := new(translate.Dialect)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		switch key {
		case "tool_calls", "reasoning", "reasoning_history", "max_tokens_field":
			var v string
			if !d.AllArgs(&v) {
				return nil, d.ArgErr()
			}
			switch key {
			case "tool_calls":
				dl.ToolCalls = translate.ToolCallFormat(v)
			case "reasoning":
				dl.Reasoning = translate.ReasoningFormat(v)
			case "reasoning_history":
				dl.ReasoningHistory = v
			case "max_tokens_field":
				dl.MaxTokensField = v
			}

		case "tools_in_prompt", "keep_tool_ids":
			if d.NextArg() {
				return nil, d.ArgErr()
			}
			if key == "tools_in_prompt" {
				dl.ToolsInPrompt = true
			} else {
				dl.KeepToolIDs = true
			}

		case "drop_params":
			params := d.RemainingArgs()
			if len(params) == 0 {
				return nil, d.ArgErr()
			}
			dl.DropParams = append(dl.DropParams, params...)

		case "max_tool_name_length":
			var s string
			if !d.AllArgs(&s) {
				return nil, d.ArgErr()
			}
			n, err := strconv.Atoi(s)
			if err != nil || n == 0 {
				return nil, d.Errf("invalid max_tool_name_length %q: want a positive integer or -1", s)
			}
			dl.MaxToolNameLength = n

		default:
			return nil, d.Errf("unrecognized dialect setting '%s'", key)
		}
	}
	if err := dl.Validate(); err != nil {
		return nil, d.Err(err.Error())
	}
	return dl, nil
}
