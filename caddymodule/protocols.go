package caddymodule

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/louter/louter/caddymodule/internal/stateful"
	"github.com/louter/louter/limits"
	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// A protocol's HTTP facts — where its clients call, how its backends are
// addressed and authenticated, which of its headers pass, what louter
// answers in its shape — are one row of this file, and the rest of the
// package reads the row instead of asking which protocol it has. The
// translation itself is the protocol's codec in package translate. Adding
// a protocol adds a codec and a row (registerProtocol); protocol-specific
// code too big for a row lives in the protocol's own file (gemini.go) or
// beside the feature it serves (serveAnthropicList in models.go), and the
// row points at it.
//
// A nil or zero field means the protocol does not have that trait; where
// louter answers something in every protocol, the field's comment says
// what a row without it gets.

// protocolRow is everything caddymodule knows about one wire protocol
// beyond its codec.
type protocolRow struct {
	// protocol is the name the configuration uses ("protocol gemini",
	// "when client gemini") and the codec's translate.Protocol.
	protocol translate.Protocol

	// --- The protocol as a client speaks it: recognising its requests ---

	// classify recognises a request of the protocol's own API namespace
	// (Gemini's .../v1beta/...), tried before the /v1 namespace the
	// Anthropic and OpenAI APIs share; see surface.go. nil: the protocol
	// has no namespace of its own.
	classify func(r *http.Request, path string) (apiRequest, bool)
	// v1Resources are the first path segments below .../v1/ that belong to
	// the protocol's API: a path below one of them that louter does not
	// serve is answered with a 404 in the protocol's error shape rather
	// than passed to the next handler.
	v1Resources []string
	// v1Endpoints are the POST endpoints below .../v1/ louter serves for
	// the protocol, with what it does with each.
	v1Endpoints map[string]apiAction
	// v1Default is set on the one protocol whose error shape a request of
	// the /v1 namespace gets when neither its path nor its headers name
	// one (GET /v1/models from an unknown client): OpenAI's, which most
	// clients of an OpenAI-compatible server understand.
	v1Default bool
	// markHeader is a header only the protocol's clients send (every
	// Anthropic SDK sends anthropic-version): a /v1 request carrying it is
	// answered in the protocol's shape whatever resource it names, so an
	// Anthropic client listing models gets Anthropic's list.
	markHeader string
	// unserved recognises a request meant for the protocol's API that no
	// other rule recognised, and returns the path its 404 names (with a
	// hint, for a common mistake); nil: none.
	unserved func(r *http.Request, path string) (api string, ok bool)
	// match recognises the protocol's chat endpoint from a POST's escaped
	// path, with the model the path names ("" when the body does). It is
	// tried after classify and the /v1 namespace, so it serves protocols
	// whose paths neither recognises (those tests register); the built-in
	// rows' paths are always recognised before it is tried, and their
	// match only names their chat endpoint.
	match func(path string) (pathModel string, ok bool)
	// unknownURL is the 404 for a path of the protocol's API that louter
	// does not serve (surface.go), worded as the provider words its own
	// (OpenAI's unknown_url). api is the path, with any hint. nil: a
	// not-found error naming the path (Anthropic's not_found_error,
	// Google's NOT_FOUND).
	unknownURL func(method, api string) *translate.Error
	// streamFromURL is set for a protocol whose URL, not body, says whether
	// to stream (Gemini's :streamGenerateContent), with how the client
	// wants the stream framed: SSE, or a streamed JSON array (Gemini
	// without ?alt=sse).
	streamFromURL func(r *http.Request) (stream, jsonArray bool)
	// conversationKey reads the conversation key an agent of the protocol
	// sends (Claude Code's session, Codex's prompt_cache_key or session
	// header, opencode's session header), or ""; see conversation_key.go.
	// nil: the first turn's hash.
	conversationKey func(h http.Header, top *translate.TopLevel) string
	// checkRequest refuses a client's chat request that the provider
	// would refuse whatever the backend: a member the API requires
	// missing, or what the protocol version the client names does not
	// allow (Anthropic's max_tokens, anthropic-version 2026-10-21:
	// anthropic_agents.go). top is the body's scan. nil: no such rules.
	checkRequest func(h http.Header, body []byte, top *translate.TopLevel) *translate.Error
	// probes are paths, below louter's prefix, that the protocol's agents
	// send HEAD to at start-up (Claude Code's /api/hello), answered with
	// an empty 200 at once, whatever the site's other handlers would do.
	probes []string
	// echoesRequest is whether the protocol's answer echoes the request's
	// tools (the Responses API's response object), so the decoded request
	// keeps their definitions while the answer streams (request_release.go).
	echoesRequest bool
	// stateful is, for a protocol whose server keeps its answers (the
	// Responses API's store, previous_response_id, GET
	// /v1/responses/{id}; the Interactions API's previous_interaction_id),
	// how it names them: louter keeps them in its own store for every
	// backend (internal/stateful). nil: a stateless protocol.
	stateful *stateful.API

	// --- The protocol as a client hears it: answers in its shape ---

	// requestID is whether the protocol's clients read a request id from
	// every answer (Anthropic's request-id, which Claude Code puts into
	// its transcripts): an answer whose backend sent none, a stream or a
	// translated one, gets one (anthropic_agents.go).
	requestID bool

	// keepalive is the frame written to an idle stream of the protocol's
	// clients (stream_timers.go), as its API sends it; nil when its
	// clients cannot take one (the genai SDK fails on SSE comments and
	// event lines, and Gemini's API has none).
	keepalive []byte
	// listModels answers a model list request (models.go). nil: OpenAI's
	// list, {"object":"list","data":[...]}, which OpenAI-compatible APIs
	// share.
	listModels func(l *Louter, w http.ResponseWriter, r *http.Request, codec translate.Codec, models []listedModel) error
	// modelInfo is the answer to a request for one model. nil: OpenAI's
	// Model object.
	modelInfo func(m listedModel) any
	// modelPrefix is the prefix the protocol's model resources carry
	// ("models/" in Gemini's names), dropped from a requested model id.
	modelPrefix string
	// countAnswer is the body of a token count of n (count_tokens.go), for
	// protocols whose clients can ask for one. original is the count
	// before the context edits louter applied (Anthropic's
	// context_management), 0 when it applied none.
	countAnswer func(n, original int) []byte
	// countRequest returns the request a count call's body holds, for a
	// protocol whose count call may wrap it (Gemini's
	// generateContentRequest); nil: the body is the request.
	countRequest func(body []byte) ([]byte, *translate.Error)
	// renameCountBody renames the model in a count call's body passed to a
	// backend of the same protocol, when the URL names the model and the
	// body may repeat it (Gemini's generateContentRequest.model); nil:
	// the URL alone carries it.
	renameCountBody func(body []byte, model string) ([]byte, error)
	// keyMissing and keyInvalid word the 401s of client_keys.go as the
	// provider does. "": OpenAI's wording.
	keyMissing, keyInvalid string
	// authError writes an authentication refusal itself, for a protocol
	// whose provider answers one in a shape its codec's error does not
	// cover (Google's 400 API_KEY_INVALID with an ErrorInfo). nil: the
	// codec's error with keyMissing or keyInvalid.
	authError func(w http.ResponseWriter, why authResult, model string)
	// limitError writes a limit's 429 itself, with Retry-After and the
	// rate-limit headers already set (Google's RetryInfo). nil: the
	// codec's error.
	limitError func(w http.ResponseWriter, msg string, retrySeconds int64)
	// rateLimitHeaders sets the provider's rate-limit headers of one
	// window on a 429 (client_errors.go); nil: the provider has none.
	rateLimitHeaders func(h http.Header, k limits.Kind, win limits.Window, now time.Time)

	// --- The protocol's requests, whichever side sends them ---

	// ownHeaders are the protocol's version and feature headers and its
	// SDK's telemetry, passed only when the client speaks the backend's
	// protocol (header_allowlist.go); a translated request gets the
	// backend protocol's headers from prepare instead.
	ownHeaders map[string]bool
	// sdkHeaders is whether the protocol's SDKs are Stainless-generated
	// and send X-Stainless-* telemetry, passed on same-protocol requests.
	sdkHeaders bool
	// passAuthHeaders are the credential headers a same-protocol request
	// keeps, as the client sent them, with pass_client_auth.
	passAuthHeaders map[string]bool
	// bodyParams are where the protocol's body holds the sampling
	// parameters a trace reports of a passthrough request (tracing.go).
	bodyParams bodyParamPaths

	// --- The protocol as a backend speaks it ---

	// endpoint returns the chat endpoint below the backend's base path,
	// escaped (a model name in it is data: escapeModelPath), and the query
	// a translated request carries (Gemini puts the model and the stream
	// mode into the URL). nil: the protocol cannot serve as a backend.
	endpoint func(model string, stream bool) (path, rawQuery string)
	// setKey puts an API key into the header the protocol reads it from.
	setKey func(h http.Header, key string)
	// streamAccept is the Accept header of a translated stream request.
	// "": text/event-stream.
	streamAccept string
	// responseFraming re-frames a backend response whose body is not in
	// the framing the codec's stream decoder reads (AWS event-stream
	// rather than SSE), replacing resp.Body and its headers before
	// reverse_proxy reads them; it runs inside the credential transport
	// (credential_transport.go), so a backend of such a protocol needs a
	// reverse_proxy upstream. It leaves any other response alone. nil:
	// the protocol streams SSE.
	responseFraming func(resp *http.Response)
	// prepare sets the protocol's own headers on a request louter builds
	// for the backend (a translated request, a model list); nil: none.
	prepare func(h http.Header)
	// backendHeaders adapts a request for a backend of the protocol to
	// the backend's configuration, after the header allowlist: the API
	// version it speaks, the header its credential goes in (cred), the
	// beta values it does not take. It returns what it left out, as
	// Request.Dropped entries. nil: the protocol has no versions or betas,
	// and a backend of it cannot set anthropic_version or drop_betas.
	backendHeaders func(b *Backend, h, cred http.Header) (dropped []string)
	// betas is how a backend of the protocol takes the client's
	// anthropic-beta values when the request is translated for it (in a
	// header or the body, which ones: anthropic_betas.go). nil: they are
	// not passed.
	betas *betaRule
	// requestBetas returns the beta values a translated request's body
	// needs from a backend of the protocol (Anthropic's web_fetch tool
	// needs one); nil: none.
	requestBetas func(body []byte) []string
	// cacheKeyMember is the request member a backend of the protocol
	// routes its prompt cache by (OpenAI's prompt_cache_key): a translated
	// request gets it set to the conversation's key (cache_key.go). "":
	// none.
	cacheKeyMember string
	// sampling is set for a protocol whose backends may refuse sampling
	// parameters for a model (Anthropic's 2026-10-21 and Claude 4.7 and
	// later); nil: they never do.
	sampling *samplingRule
	// defaultBasePath replaces the usual /v1 when a backend sets no
	// base_path (Gemini's API lives under /v1beta; "/" is the root).
	defaultBasePath string
	// configure checks a backend's settings of the protocol at provision
	// and applies them (a cloud's project and location in the base path,
	// a deployment API's version in the endpoint; vertex.go, azure.go),
	// before its upstream is loaded. nil: nothing to check.
	configure func(b *Backend) error
	// defaultUpstream is the upstream of a backend that names none, for a
	// protocol whose settings say where its API lives (a Vertex AI
	// location's host); nil: every backend names its upstream.
	defaultUpstream func(b *Backend) (json.RawMessage, error)
	// modelInURL is whether the backend's endpoint carries the model name
	// in its path, which makes a client's name a path segment to check
	// (model_name.go).
	modelInURL bool
	// listQuery is the query of a request for the backend's model list:
	// the largest page the API allows, so one request usually gets all.
	listQuery   string
	probeInvoke bool // no model list: the probe invokes a model that does not exist (diagnostics_probe.go)
	// parseModelList reads the model ids of the backend's list (models_passthrough.go).
	// nil: OpenAI's and Anthropic's {"data":[{"id"}]}.
	parseModelList func(body []byte) []string
	// counter asks the backend's own token-counting endpoint
	// (count_tokens.go); nil: louter counts locally.
	counter *backendCounter
	// tokenFraming is how the backend's API counts a request beyond its
	// text (message and tool overhead, images, PDF pages, vocabulary), for
	// louter's local counts and estimates of requests sent to it: the
	// count call's local answer, the input estimate a stream announces,
	// the tokens route condition and the client limits' estimate. nil:
	// tokencount's default for a nil *Framing, OpenAI's.
	tokenFraming *tokencount.Framing
	// provider is gen_ai.provider.name of a backend of the protocol: the
	// provider whose API it speaks. Zero: openai, the API an
	// OpenAI-compatible server (vLLM, Ollama, ...) implements.
	provider attribute.KeyValue
	// recordedPrefixes start the protocol's own response headers (rate
	// limits, request ids) that a recording keeps (record_capture.go).
	recordedPrefixes []string
}

// samplingRule is when a backend refuses temperature, top_p and top_k,
// and how they are taken out of a body in the protocol's shape (a
// passthrough; a translated request drops them from the IR).
type samplingRule struct {
	refuses func(b *Backend, model string) bool
	strip   func(body []byte) ([]byte, []string)
}

// bodyParamPaths are where a protocol's body holds max tokens (the first
// path present), temperature, top_p and top_k ("" when it has none), as
// gjson paths.
type bodyParamPaths struct {
	maxTokens               []string
	temperature, topP, topK string
}

// anthropicVersion is the Messages API version louter's Anthropic codec
// speaks; the API rejects requests without one.
const anthropicVersion = "2023-06-01"

// protocolRows are the rows, in the order requests are matched against
// them: the built-in ones, then those registered after them (tests);
// rows indexes them.
var (
	protocolRows []*protocolRow
	rows         = indexRows(nil)
)

// The built-in rows are made in init rather than in protocolRows'
// initializer so that the functions they point at may read rows
// themselves: through an initializer that would be an initialization
// cycle.
func init() {
	protocolRows = append(builtinRows(), protocolRows...)
	rows = indexRows(protocolRows)
}

// builtinRows are louter's four protocols.
func builtinRows() []*protocolRow {
	return []*protocolRow{
		{
			protocol:    translate.ProtocolAnthropic,
			v1Resources: []string{"messages", "complete"},
			v1Endpoints: map[string]apiAction{"messages": actChat, "messages/count_tokens": actElsewhere},
			markHeader:  "Anthropic-Version",
			unserved: func(r *http.Request, path string) (string, bool) {
				// Anything under /v1 from an Anthropic SDK (POST /v1/message).
				ok := r.Header.Get("Anthropic-Version") != "" && (slices.Contains(strings.Split(path, "/"), "v1") || strings.HasSuffix(path, "/messages"))
				return path, ok
			},
			match:            pathSuffix("/v1/messages"),
			conversationKey:  anthropicConversationKey,
			checkRequest:     anthropicCheckRequest,
			probes:           anthropicProbes,
			requestID:        true,
			keepalive:        []byte("event: ping\ndata: {\"type\": \"ping\"}\n\n"),
			listModels:       (*Louter).serveAnthropicList,
			modelInfo:        func(m listedModel) any { return newAnthropicModel(m) },
			countAnswer:      inputTokensAnswer,
			keyMissing:       "louter: no API key was sent (x-api-key or Authorization: Bearer)",
			keyInvalid:       "louter: invalid x-api-key",
			rateLimitHeaders: anthropicRateLimitHeaders,
			ownHeaders:       headerSet("Anthropic-Version", "Anthropic-Beta", "Anthropic-Workspace-Id"),
			sdkHeaders:       true,
			passAuthHeaders:  headerSet("X-Api-Key", "Authorization"),
			bodyParams:       bodyParamPaths{[]string{"max_tokens"}, "temperature", "top_p", "top_k"},
			endpoint:         func(string, bool) (string, string) { return "/messages", "" },
			setKey:           func(h http.Header, key string) { h.Set("X-Api-Key", key) },
			prepare: func(h http.Header) {
				if h.Get("Anthropic-Version") == "" {
					h.Set("Anthropic-Version", anthropicVersion)
				}
			},
			backendHeaders:   anthropicBackendHeaders,
			requestBetas:     translate.AnthropicRequestBetas,
			sampling:         anthropicSampling,
			listQuery:        "limit=1000",
			counter:          anthropicCounter,
			tokenFraming:     tokencount.Anthropic,
			provider:         semconv.GenAIProviderNameAnthropic,
			recordedPrefixes: []string{"Anthropic-"},
		},
		{
			protocol: translate.ProtocolOpenAIChat,
			v1Resources: []string{"chat", "completions", "models", "embeddings", "files", "batches", "audio", "images",
				"moderations", "fine_tuning", "assistants", "threads", "vector_stores", "uploads", "realtime"},
			// embeddings and completions are passed to openai_chat backends
			// untranslated (openai_passthrough.go).
			v1Endpoints: map[string]apiAction{"chat/completions": actChat, "embeddings": actOpenAIPassthrough, "completions": actOpenAIPassthrough},
			v1Default:   true,
			unserved: func(r *http.Request, path string) (string, bool) {
				// A client that left /v1 out of its base URL.
				return path + " (OpenAI Chat is served at .../v1/chat/completions: end the client's base URL with /v1)",
					strings.HasSuffix(path, "/chat/completions")
			},
			match:            pathSuffix("/v1/chat/completions"),
			unknownURL:       openAIUnknownURL,
			conversationKey:  openAIConversationKey,
			keepalive:        []byte(": keep-alive\n\n"),
			rateLimitHeaders: openAIRateLimitHeaders,
			ownHeaders:       headerSet("Openai-Beta", "Idempotency-Key"),
			sdkHeaders:       true,
			passAuthHeaders:  headerSet("Authorization", "Api-Key", "Openai-Organization", "Openai-Project"),
			// max_tokens is the older name of max_completion_tokens.
			bodyParams:       bodyParamPaths{[]string{"max_completion_tokens", "max_tokens"}, "temperature", "top_p", ""},
			endpoint:         func(string, bool) (string, string) { return "/chat/completions", "" },
			cacheKeyMember:   "prompt_cache_key",
			setKey:           setBearer,
			tokenFraming:     tokencount.OpenAI,
			provider:         semconv.GenAIProviderNameOpenAI,
			recordedPrefixes: []string{"Openai-", "X-Ratelimit-"},
		},
		{
			protocol:         translate.ProtocolOpenAIResponses,
			classify:         classifyResponsesNoV1, // .../responses without /v1 (surface.go)
			v1Resources:      []string{"responses", "conversations"},
			v1Endpoints:      map[string]apiAction{"responses": actChat},
			match:            pathSuffix("/v1/responses"),
			unknownURL:       openAIUnknownURL,
			conversationKey:  openAIConversationKey,
			echoesRequest:    true,
			stateful:         &stateful.Responses, // internal/stateful
			keepalive:        []byte(": keep-alive\n\n"),
			rateLimitHeaders: openAIRateLimitHeaders,
			ownHeaders:       headerSet("Openai-Beta", "Idempotency-Key", "Originator", "Session_id", "Conversation_id"),
			sdkHeaders:       true,
			passAuthHeaders:  headerSet("Authorization", "Api-Key", "Openai-Organization", "Openai-Project", "Chatgpt-Account-Id"),
			bodyParams:       bodyParamPaths{[]string{"max_output_tokens"}, "temperature", "top_p", ""},
			endpoint:         func(string, bool) (string, string) { return "/responses", "" },
			cacheKeyMember:   "prompt_cache_key",
			setKey:           setBearer,
			tokenFraming:     tokencount.OpenAI,
			provider:         semconv.GenAIProviderNameOpenAI,
			recordedPrefixes: []string{"Openai-", "X-Ratelimit-"},
		},
		{
			protocol:         translate.ProtocolGemini,
			classify:         classifyGemini,
			match:            geminiMatch,
			streamFromURL:    geminiStreamFromURL,
			conversationKey:  sessionHeaderKey,
			listModels:       (*Louter).serveGeminiList,
			modelInfo:        func(m listedModel) any { return newGeminiModelInfo(m.id) },
			modelPrefix:      "models/",
			countAnswer:      func(n, _ int) []byte { return []byte(`{"totalTokens":` + strconv.Itoa(n) + `}`) },
			countRequest:     geminiCountRequest,
			renameCountBody:  geminiRenameCountBody,
			authError:        writeGeminiAuthError,
			limitError:       writeGeminiLimitError,
			ownHeaders:       headerSet("X-Goog-Api-Client"),
			passAuthHeaders:  headerSet("X-Goog-Api-Key", "Authorization", "X-Goog-User-Project"),
			bodyParams:       bodyParamPaths{[]string{"generationConfig.maxOutputTokens"}, "generationConfig.temperature", "generationConfig.topP", "generationConfig.topK"},
			endpoint:         geminiBackendEndpoint,
			setKey:           func(h http.Header, key string) { h.Set("X-Goog-Api-Key", key) },
			defaultBasePath:  "/v1beta",
			modelInURL:       true,
			listQuery:        "pageSize=1000",
			parseModelList:   parseGeminiModelList,
			counter:          geminiCounter,
			tokenFraming:     tokencount.Gemini,
			provider:         semconv.GenAIProviderNameGCPGemini,
			recordedPrefixes: []string{"X-Goog-"},
		},
	}
}

// prepareRequest sets the protocol's own headers on a request louter
// builds for a backend.
func (row *protocolRow) prepareRequest(h http.Header) {
	if row.prepare != nil {
		row.prepare(h)
	}
}

// openAIUnknownURL is OpenAI's answer to a path its API does not have: a
// 404 invalid_request_error with code unknown_url, not a missing model.
func openAIUnknownURL(method, api string) *translate.Error {
	return &translate.Error{Status: http.StatusNotFound, Kind: translate.ErrInvalidRequest, Code: "unknown_url",
		Message: fmt.Sprintf("Unknown request URL: %s %s. louter does not serve it; please check the URL for typos.", method, api)}
}

// setBearer sends a key as a bearer token, as the OpenAI APIs read it.
func setBearer(h http.Header, key string) { h.Set("Authorization", "Bearer "+key) }

// inputTokensAnswer is Anthropic's count_tokens answer, with
// context_management.original_input_tokens when louter applied the
// request's context edits (as Anthropic's answer has when it did).
func inputTokensAnswer(n, original int) []byte {
	b := []byte(`{"input_tokens":` + strconv.Itoa(n))
	if original > 0 {
		b = append(append(b, `,"context_management":{"original_input_tokens":`...), strconv.Itoa(original)...)
		b = append(b, '}')
	}
	return append(b, '}')
}

// protocolIndex finds rows by what requests carry.
type protocolIndex struct {
	byProtocol map[translate.Protocol]*protocolRow
	// v1Resources and v1Endpoints gather the rows' /v1 namespace: the
	// protocol each resource belongs to, and the endpoints served, with
	// the namespace's shared ones (surface.go).
	v1Resources map[string]translate.Protocol
	v1Endpoints map[string]apiEndpoint
}

func indexRows(list []*protocolRow) protocolIndex {
	x := protocolIndex{
		byProtocol:  make(map[translate.Protocol]*protocolRow, len(list)),
		v1Resources: map[string]translate.Protocol{},
		v1Endpoints: maps.Clone(v1SharedEndpoints),
	}
	for _, row := range list {
		x.byProtocol[row.protocol] = row
		for _, res := range row.v1Resources {
			if _, dup := x.v1Resources[res]; !dup {
				x.v1Resources[res] = row.protocol
			}
		}
		for path, action := range row.v1Endpoints {
			if _, dup := x.v1Endpoints[path]; !dup {
				x.v1Endpoints[path] = apiEndpoint{row.protocol, action, http.MethodPost}
			}
		}
	}
	return x
}

// registerProtocol adds a protocol's row, after the others, for a
// protocol whose codec translate.Register registers. It is meant for init
// functions (tests register protocols of their own): rows are read
// without a lock.
func registerProtocol(row *protocolRow) {
	if _, dup := rows.byProtocol[row.protocol]; dup {
		panic("caddymodule: protocol " + string(row.protocol) + " registered twice")
	}
	protocolRows = append(protocolRows, row)
	rows = indexRows(protocolRows)
}

// noRow is the row of a protocol louter does not serve: every trait off.
var noRow = &protocolRow{}

// rowOf returns p's row, or an empty one when p has none.
func rowOf(p translate.Protocol) *protocolRow {
	if row, ok := rows.byProtocol[p]; ok {
		return row
	}
	return noRow
}

// tokenFramingOf returns how a backend of protocol p counts a request
// (its row's tokenFraming), for a replay to estimate as the handler does.
func tokenFramingOf(p translate.Protocol) *tokencount.Framing { return rowOf(p).tokenFraming }

// servedProtocol returns p's row and codec, and whether louter serves p:
// a protocol needs both. Configuration accepts only these names.
func servedProtocol(p translate.Protocol) (*protocolRow, translate.Codec, bool) {
	row, ok := rows.byProtocol[p]
	if !ok {
		return noRow, nil, false
	}
	codec, ok := translate.Lookup(p)
	return row, codec, ok
}

// knownProtocols lists the protocols louter serves, for error messages.
func knownProtocols() string {
	var names []string
	for _, row := range protocolRows {
		if _, _, ok := servedProtocol(row.protocol); ok {
			names = append(names, string(row.protocol))
		}
	}
	slices.Sort(names) // keep the message stable
	return strings.Join(names, ", ")
}

// dialectProtocols lists the protocols that take a dialect, for error
// messages.
func dialectProtocols() string {
	var names []string
	for _, row := range protocolRows {
		if takesDialect(row.protocol) {
			names = append(names, string(row.protocol))
		}
	}
	return strings.Join(names, ", ")
}

// takesDialect reports whether p's codec applies a backend's dialect
// (translate.DialectCodec).
func takesDialect(p translate.Protocol) bool {
	c, ok := translate.Lookup(p)
	if !ok {
		return false
	}
	_, ok = c.(translate.DialectCodec)
	return ok
}

// markedProtocol returns the protocol whose clients alone send a header r
// carries (markHeader).
func markedProtocol(h http.Header) (translate.Protocol, bool) {
	for _, row := range protocolRows {
		if row.markHeader != "" && h.Get(row.markHeader) != "" {
			return row.protocol, true
		}
	}
	return "", false
}

// v1Shape returns the protocol whose error shape a /v1 request that names
// no protocol gets: the one its headers mark, else the default.
func v1Shape(h http.Header) translate.Protocol {
	if p, ok := markedProtocol(h); ok {
		return p
	}
	for _, row := range protocolRows {
		if row.v1Default {
			return row.protocol
		}
	}
	return ""
}
