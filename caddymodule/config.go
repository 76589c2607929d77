package caddymodule

import (
	"encoding/json"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/translate"
)

// Backend is one LLM API louter can send requests to: the wire protocol it
// speaks, the credentials it needs, and the handler that reaches it —
// normally a stock reverse_proxy, so load balancing, health checks, retries,
// TLS and header rules work as they do anywhere else in Caddy.
type Backend struct {
	// The wire protocol the backend speaks: "anthropic" (Messages API),
	// "openai_chat" (Chat Completions), "openai_responses" (Responses API),
	// "gemini" (generateContent), "gemini_interactions" (Interactions),
	// "bedrock" (InvokeModel), "bedrock_converse" (Converse),
	// "vertex_anthropic", "vertex_gemini", "azure_openai" or
	// "azure_openai_responses" (docs/backends.md, docs/cloud-bedrock.md, docs/cloud-vertex-azure.md). Requests
	// from clients speaking another protocol are translated; requests in
	// the same protocol pass through untouched except for the model rename
	// and max_tokens cap.
	Protocol translate.Protocol `json:"protocol"`

	// How an OpenAI-compatible server (llama-server, vLLM, Ollama, SGLang,
	// DeepSeek) differs from OpenAI: tool calls and reasoning left in the
	// text (Hermes and Qwen3-Coder tool calls, <think> tags, gpt-oss
	// harmony), the reasoning it needs sent back, tools rendered into the
	// prompt, and request quirks. openai_chat backends only. Without it the
	// safe defaults apply to translated requests (see translate.Dialect);
	// with it, OpenAI Chat clients are translated too instead of passed
	// through, so they get the parsed tool calls and reasoning.
	Dialect *translate.Dialect `json:"dialect,omitempty"`

	// The API key sent to the backend, in the header its protocol uses
	// (anthropic: x-api-key; openai_chat and openai_responses:
	// Authorization: Bearer; gemini: x-goog-api-key). When the upstream is
	// a reverse_proxy, the key is added by its transport, so its request
	// logs never show it. Placeholders such as {env.OPENAI_API_KEY} are
	// resolved once, when the configuration is loaded (a variable set later
	// is not seen; an unset one is warned about and yields no key). Unless
	// pass_client_auth is set, the
	// client's own credentials are always removed from the request.
	APIKey string `json:"api_key,omitempty"`

	// Forward the client's own credential instead of removing it. When the
	// client speaks another protocol than the backend, its key is moved
	// into the header the backend's protocol uses; when it speaks the
	// backend's protocol, the credential headers of that protocol go on as
	// the client sent them (a ?key= moves into the protocol's header).
	// api_key, if set, is sent only when the client sent no key. Either
	// way the key is added below reverse_proxy's logs. On an
	// openai_responses backend it also lets a previous_response_id or
	// conversation louter does not hold for the client go to the backend,
	// whose own isolation then applies; without it they are louter's
	// (docs/stored-responses.md, Isolation).
	PassClientAuth bool `json:"pass_client_auth,omitempty"`

	// More client request headers to send to the backend, beyond those
	// louter passes by default (content negotiation, tracing, request
	// ids, and the protocol's own headers when the client speaks the
	// backend's protocol). Every other client header is removed. Headers
	// that carry credentials cannot be listed; use pass_client_auth.
	ForwardHeaders []string `json:"forward_headers,omitempty"`

	// The path prefix of the backend's API; the protocol's endpoint
	// (/messages, /chat/completions, /responses, or
	// /models/{model}:generateContent for gemini) is appended to it.
	// Default: /v1, and /v1beta for gemini. Use "/" for a backend that
	// serves its endpoints at the root.
	BasePath string `json:"base_path,omitempty"`

	// A cap on the output tokens a request may ask for. A request asking
	// for more is lowered to the cap; a translated request that asks for
	// no limit gets the cap. 0 means no cap.
	MaxTokens int `json:"max_tokens,omitempty"`

	// The Messages API version an anthropic backend speaks, sent as its
	// anthropic-version header whatever version the client sent:
	// "2023-06-01" or "2026-10-21". With 2026-10-21 the API key goes as
	// Authorization: Bearer (as that version's SDKs send it) and
	// temperature, top_p and top_k are left out of every request, which
	// that version refuses; with 2023-06-01 a client's API key sent as a
	// bearer token (pass_client_auth) moves to x-api-key. Whatever the
	// version, a request for a Claude model of version 4.7 or later never
	// gets temperature, top_p or top_k either. Empty: a client of the
	// backend's protocol keeps its own version header, a translated
	// request gets 2023-06-01. anthropic backends only.
	AnthropicVersion string `json:"anthropic_version,omitempty"`

	// anthropic-beta values not to send to an anthropic backend, as globs
	// ("*" matches any run of characters): for an Anthropic-format
	// backend that refuses a beta it does not know (Bedrock answers 400 to
	// the whole request). Each value left out is counted in
	// louter_dropped_fields_total and logged at debug. Backends of other
	// protocols never get anthropic-beta. anthropic backends only.
	DropBetas []string `json:"drop_betas,omitempty"`

	// What to do with a server tool (web search, URL fetching) a request
	// offers when this backend's protocol cannot run it: openai_chat
	// (self-hosted servers included), bedrock, bedrock_converse and
	// azure_openai_responses run none; openai_responses runs web search;
	// anthropic and gemini run web search and URL fetching. "" (the
	// default): a request whose tool choice forces the tool is refused
	// with a 400 in the client's protocol naming it (the answer could
	// only be made up), and the tool is left out of any other request and
	// counted in louter_dropped_fields_total (Codex offers web_search in
	// every request and keeps working). "reject": every request offering
	// the tool is refused. "drop": the tool is always left out, a forcing
	// tool choice becoming auto. "none": as the default, for a backend
	// that runs no server tool although its protocol has them (a
	// self-hosted server speaking the Responses API). A request passed
	// to a backend of the client's own protocol is not changed.
	ServerTools translate.ServerToolPolicy `json:"server_tools,omitempty"`

	// Keep Claude Code's attribution line (the system block
	// "x-anthropic-billing-header: cc_version=...; cc_entrypoint=...;")
	// in requests translated for this backend. By default louter removes
	// it from every translated request, because it differs between
	// conversations and sub-agents and so defeats the backend's prefix
	// cache for the whole system prompt and tool list behind it; a
	// request passed to an Anthropic backend in its own protocol keeps it
	// either way.
	KeepBillingHeader bool `json:"keep_billing_header,omitempty"`

	// How this backend gets Anthropic's context editing, the
	// context_management member Claude Code and the Anthropic SDKs send
	// (clear_tool_uses_20250919, clear_thinking_20251015,
	// compact_20260112). Empty: backends that apply the edits themselves
	// (anthropic, bedrock) get the member as the client sent it, and
	// louter applies the edits for every other backend, reporting
	// context_management.applied_edits to the client as Anthropic does.
	// "native" says the former (refused for a protocol that cannot take
	// the member); "polyfill" has louter apply the edits even for an
	// Anthropic-format backend (a Messages API server without context
	// editing: its requests are then translated, not passed through);
	// "off" leaves the member out without applying it, counted in
	// louter_dropped_fields_total. See docs/agents-2026.md.
	ContextManagement string `json:"context_management,omitempty"`

	// Where the model lists louter answers (GET /v1/models, Gemini's
	// GET /v1beta/models) get this backend's models from, besides the
	// routes' names: "passthrough" asks the backend for its own list
	// (GET {base_path}/models) at each list request and adds the models of
	// that list which the routes send to this backend. Empty: the backend
	// is not asked.
	ListModels string `json:"list_models,omitempty"`

	// The handler that sends the request to the backend, usually
	// {"handler": "reverse_proxy", ...} with any stock reverse_proxy
	// options. louter calls it with the rewritten request and translates
	// what it writes.
	UpstreamRaw json.RawMessage `json:"upstream,omitempty" caddy:"namespace=http.handlers inline_key=handler"`

	// How louter authenticates to the backend when a static api_key cannot:
	// a module of the http.handlers.louter.auth namespace, named by its
	// "method" key (backend_auth.go), which signs or adds a token to each
	// request inside reverse_proxy's transport. Exclusive with api_key and
	// pass_client_auth; the upstream must be a reverse_proxy.
	AuthRaw json.RawMessage `json:"auth,omitempty" caddy:"namespace=http.handlers.louter.auth inline_key=method"`

	// Where a Google Vertex AI backend's API lives (vertex_anthropic,
	// vertex_gemini): project, location, API version. See vertex.go.
	Vertex *VertexSettings `json:"vertex,omitempty"`

	// Where an Azure OpenAI backend's API lives (azure_openai,
	// azure_openai_responses): the v1 API or a classic deployment API
	// version, and the resource. See azure.go.
	Azure *AzureSettings `json:"azure,omitempty"`

	name  string
	codec translate.Codec
	// endpoint, when set by the row's configure, replaces the row's
	// endpoint for this backend (a classic Azure deployment's api-version).
	endpoint func(model string, stream bool) (path, rawQuery string)
	apiKey   string // APIKey with placeholders resolved
	basePath string // normalized: "" or "/x/y"
	upstream caddyhttp.MiddlewareHandler
	auth     BackendAuth // AuthRaw, provisioned
	// forwardHeaders is ForwardHeaders in canonical form.
	forwardHeaders map[string]bool
	// credentialTransport is set when the upstream is a reverse_proxy
	// whose transport louter wrapped to add the credential
	// (credential_transport.go).
	credentialTransport bool
	// conversationHeader is set when the upstream's lb_policy hashes
	// ConversationHeader, which must then carry a key for every request
	// (conversation_key.go).
	conversationHeader bool
}

// ModelRoute sends requests for matching models to a backend. Routes are
// tried in order; the first match wins.
type ModelRoute struct {
	// A glob matched against the model the client asked for. '*' matches
	// any run of characters, including '/' and ':'; every other character
	// matches itself. "*" alone matches every model.
	Match string `json:"match"`

	// The name of the backend (a key of backends) to send the request to.
	Backend string `json:"backend"`

	// The model name to send to the backend instead of the client's. Empty
	// keeps the client's model name. A translated response reports the
	// client's own model name; a passthrough response (client and backend
	// speak the same protocol) is untouched and reports the backend's.
	Rename string `json:"rename,omitempty"`

	// Model names the route adds to the model lists louter answers, for a
	// route whose pattern is a glob: a literal pattern is listed anyway,
	// a glob names no model by itself. Each name must match the pattern.
	// Claude Code's /model picker, for one, offers only listed models.
	List []string `json:"list,omitempty"`

	// Other names a client may send for the route's model, each listed
	// in every model list (Anthropic's, OpenAI's, Gemini's, Codex's
	// catalogue) like the pattern itself: "claude-qwen3-coder" for Claude
	// Code's /model picker (which offers ids containing "claude"), a
	// Google model id such as "gemini-3.1-pro-high" for Antigravity (which
	// accepts only the ids of its own catalogue). An alias matches
	// exactly, and the backend is asked for the route's rename or, without
	// one, its literal pattern (a glob pattern needs a rename); a
	// translated answer reports the alias the client sent. See
	// model_aliases.go.
	Aliases []string `json:"aliases,omitempty"`

	// Backends to try, in order, when the route's backend fails before the
	// client received any content: it cannot be reached, answers 429 or a
	// 5xx (Anthropic's 529 overloaded included), or its stream ends or
	// reports an error, or stays silent past first_byte_timeout, before
	// the first content event. Each may speak another protocol: the
	// request is translated for each. See fallback.go.
	Fallbacks []RouteFallback `json:"fallbacks,omitempty"`

	// Conditions on the request's content that send it to another backend
	// than Backend (route_conditions.go): tried in order once Match has
	// matched, the first that holds wins; when none holds, Backend serves
	// (with Fallbacks). A backend a condition chose serves alone.
	When []RouteCondition `json:"when,omitempty"`

	// Limits on all requests the route takes, whichever client sends
	// them (see Limits); client limits apply besides.
	Limits *Limits `json:"limits,omitempty"`

	backend *Backend
}
