// Package mock implements http.handlers.louter_mock, a scripted LLM backend
// for tests and benchmarks. It serves the Anthropic Messages, OpenAI Chat
// Completions, OpenAI Responses and Gemini endpoints as a provider would,
// answering each request with a scenario (plain text, tool calls, reasoning,
// errors, broken streams, ...) chosen per request. It reads requests and writes answers with the same
// translate codecs louter uses for its clients, so what it sends is what
// louter itself produces for that protocol.
//
// OpenAI Chat answers can instead look like those of a self-hosted server
// whose own parser is off, with tool calls and reasoning left as markup in
// the content (the dialect setting, dialect.go), and an OpenAI Chat request
// without tools has them read from its system prompt (prompt_tools.go).
//
// It also keeps a journal of the requests it received, served at
// GET .../_mock/requests and cleared by DELETE .../_mock/requests, so tests
// can check what a proxy sent upstream.
package mock

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

func init() {
	caddy.RegisterModule(Mock{})
}

// BackendHeader is the response header that names the mock that answered.
const BackendHeader = "X-Mock-Backend"

// journalPathSuffix is the path of the journal, under any prefix.
const journalPathSuffix = "/_mock/requests"

// maxRequestBody bounds the request bodies the mock reads.
const maxRequestBody = 32 << 20

// Mock is a scripted LLM backend. Every request to a protocol endpoint
// (POST .../v1/messages, POST .../v1/chat/completions, under any prefix) is
// answered by a scenario, chosen by the X-Mock-Scenario header, else by a
// [mock:NAME] marker in the last user message, else by DefaultScenario.
// Every response carries the X-Mock-Backend header with Name. Other paths
// get a 404; the handler never calls the next one.
type Mock struct {
	// Name identifies this mock: it is sent in the X-Mock-Backend response
	// header, appears in scripted answers, and keys the request journal, so
	// the journal survives config reloads. Mocks with the same name share a
	// journal. Default: "mock".
	Name string `json:"name,omitempty"`

	// DefaultScenario is the scenario of requests that do not choose one.
	// Default: "agent".
	DefaultScenario string `json:"default_scenario,omitempty"`

	// ChunkDelay is the pause between streamed events (and between the
	// events of a replayed SSE fixture). Default: none.
	ChunkDelay caddy.Duration `json:"chunk_delay,omitempty"`

	// ChunkSize, when positive, cuts every write into pieces of at most
	// this many bytes, each flushed on its own, so clients see events split
	// across reads. Default: 0 (one write per event).
	ChunkSize int `json:"chunk_size,omitempty"`

	// FixturesDir is the directory the fixture=FILE scenario replays files
	// from. Without it, that scenario is refused.
	FixturesDir string `json:"fixtures_dir,omitempty"`

	// ModelPrefix is prepended to the request's model in the model name the
	// mock reports, so tests can tell a backend's model name from the one
	// the client asked for. Default: none (the request's model).
	ModelPrefix string `json:"model_prefix,omitempty"`

	// Dialect makes OpenAI Chat answers look like those of a self-hosted
	// server whose own parser is off, for testing dialect parsing. It is
	// a tool-call style, "native" (default), "hermes", "qwen3_coder" or
	// "qwen3_coder_bare" (without the <tool_call> wrapper), and a
	// reasoning style, "reasoning_content" (default), "reasoning", "think"
	// (<think>…</think> opens the content) or "think_open" (only
	// </think>), separated by a space, either of which may be left out;
	// or "harmony" alone (gpt-oss channels in the content). Markup in the
	// content is streamed in pieces of 1 to 7 bytes, and calls in the
	// content come with finish_reason "stop". The X-Mock-Dialect request
	// header chooses another, with the same words. Other protocols are
	// not affected. Default: "native reasoning_content".
	Dialect string `json:"dialect,omitempty"`

	// Replay is a recording made with louter's record setting, whose
	// recorded backend responses answer the chat requests instead of
	// scenarios (replay.go: how a record is matched to a request).
	Replay string `json:"replay,omitempty"`

	// ReplayTiming sends each replayed event when it came in the
	// recording, counted from the start of the exchange; without it the
	// events go out at once (or chunk_delay apart).
	ReplayTiming bool `json:"replay_timing,omitempty"`

	// Bedrock is what the Bedrock endpoints (/model/{id}/invoke, ...)
	// accept: every request's SigV4 signature is recomputed and checked,
	// or its Bedrock API key. Without it they refuse every request.
	Bedrock *BedrockAuth `json:"bedrock,omitempty"`

	dialect dialect
	journal *journal
	logger  *zap.Logger
	replay  *replaySet // loaded from Replay (replay.go)
}

// CaddyModule returns the Caddy module information.
func (Mock) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.louter_mock",
		New: func() caddy.Module { return new(Mock) },
	}
}

// Provision sets defaults and attaches the journal.
func (m *Mock) Provision(ctx caddy.Context) error {
	m.logger = ctx.Logger()
	if m.Name == "" {
		m.Name = "mock"
	}
	if m.DefaultScenario == "" {
		m.DefaultScenario = "agent"
	}
	d, err := parseDialect(m.Dialect)
	if err != nil {
		return fmt.Errorf("louter_mock: dialect: %w", err)
	}
	m.dialect = d
	m.journal = journalFor(m.Name)
	return m.provisionReplay() // replay.go
}

// Validate checks the configuration.
func (m *Mock) Validate() error {
	if m.ChunkDelay < 0 {
		return fmt.Errorf("louter_mock: chunk_delay must not be negative, got %s", time.Duration(m.ChunkDelay))
	}
	if m.ChunkSize < 0 {
		return fmt.Errorf("louter_mock: chunk_size must not be negative, got %d", m.ChunkSize)
	}
	if !knownScenario(m.DefaultScenario) {
		return fmt.Errorf("louter_mock: unknown default_scenario %q (known: %s)", m.DefaultScenario, strings.Join(ScenarioNames(), ", "))
	}
	if _, err := parseDialect(m.Dialect); err != nil {
		return fmt.Errorf("louter_mock: dialect: %w", err)
	}
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler. The mock is terminal:
// it answers every request itself.
func (m *Mock) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	w.Header().Set(BackendHeader, m.Name)
	if strings.HasSuffix(r.URL.Path, journalPathSuffix) {
		m.serveJournal(w, r)
		return nil
	}
	if m.serveNonChat(w, r) {
		return nil // model lists, embeddings, completions (non_chat.go)
	}
	if m.serveBedrockCount(w, r) {
		return nil // bedrock.go
	}
	if m.serveCountTokens(w, r) {
		return nil // count_tokens.go
	}

	spec := protocolForPath(r.URL.Path)
	var body []byte
	var readErr error
	if r.Body != nil {
		body, readErr = io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	}
	protocol := ""
	if spec != nil {
		protocol = string(spec.protocol)
	}
	entry := m.journal.record(protocol, r, body)

	if spec == nil {
		writePlainError(w, http.StatusNotFound, "not_found_error", "louter_mock: no endpoint at "+r.Method+" "+r.URL.Path)
		return nil
	}
	codec, ok := translate.Lookup(spec.protocol)
	if !ok {
		writePlainError(w, http.StatusNotImplemented, "api_error", "louter_mock: no codec for protocol "+protocol)
		return nil
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, codec, translate.NewError(http.StatusMethodNotAllowed, "louter_mock: "+r.URL.Path+" takes POST, not "+r.Method), "")
		return nil
	}
	if readErr != nil {
		status := http.StatusBadRequest
		if errors.As(readErr, new(*http.MaxBytesError)) {
			status = http.StatusRequestEntityTooLarge
		}
		writeError(w, codec, translate.NewError(status, "louter_mock: reading the request body: "+readErr.Error()), "")
		return nil
	}
	if spec.aws {
		if why := m.Bedrock.check(r, body); why != "" {
			w.Header().Set("X-Amzn-Errortype", "InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/")
			writeStatusJSON(w, http.StatusForbidden, map[string]string{"message": why})
			return nil
		}
	}
	if spec.fillBody != nil {
		body = spec.fillBody(r, body)
	}
	if m.replay != nil {
		id := m.serveRecorded(w, r, spec.protocol, body) // replay.go
		m.journal.update(entry, func(e *journalEntry) { e.Scenario = "replay " + id })
		return nil
	}
	req, err := codec.DecodeRequest(body)
	if err != nil {
		var te *translate.Error
		if !errors.As(err, &te) {
			te = translate.BadRequest(err.Error())
		}
		writeError(w, codec, te, "")
		return nil
	}

	x := &exchange{mock: m, spec: spec, req: req, credential: receivedCredential(r), overflowWording: r.Header.Get(OverflowHeader)}
	if spec.fromURL != nil {
		x.jsonArray = spec.fromURL(r, req)
	}
	if spec.protocol == translate.ProtocolOpenAIChat {
		x.dialect = m.dialect
		if h := strings.TrimSpace(r.Header.Get(DialectHeader)); h != "" {
			if x.dialect, err = parseDialect(h); err != nil {
				writeError(w, codec, translate.BadRequest("louter_mock: "+DialectHeader+": "+err.Error()), "")
				return nil
			}
		}
		readPromptTools(req)
	}
	scenario := selectScenario(r, req, m.DefaultScenario)
	m.journal.update(entry, func(e *journalEntry) { e.Scenario = scenario })
	if err := m.answer(w, r, x, codec, x.dialect.render(x.reply(scenario)), len(body)); err != nil {
		if r.Context().Err() != nil {
			m.journal.update(entry, func(e *journalEntry) { e.Cancelled = true })
		}
		// The response has started: all that is left is to stop writing.
		if c := m.logger.Check(zap.DebugLevel, "mock answer interrupted"); c != nil {
			c.Write(zap.String("scenario", scenario), zap.Error(err))
		}
	}
	return nil
}

// answer writes a scenario's reply in the protocol of codec. It returns an
// error only when writing failed or the client went away.
func (m *Mock) answer(w http.ResponseWriter, r *http.Request, x *exchange, codec translate.Codec, rep *reply, bodyLen int) error {
	if rep.err != nil {
		writeError(w, codec, rep.err, rep.retryAfter)
		return nil
	}
	if err := stallBefore(r.Context(), r); err != nil {
		return err
	}
	if rep.raw != nil {
		rep.raw.write(w)
		return nil
	}
	delay := time.Duration(m.ChunkDelay)
	if rep.eventDelay > 0 {
		delay = rep.eventDelay
	}
	pw := newPacedWriter(r.Context(), w, delay, m.ChunkSize)
	applyStallHeaders(pw, r)
	if rep.fixture != "" {
		return m.replayFixture(w, pw, codec, rep.fixture)
	}

	// The encoders report the model of the request they are given.
	encReq := *x.req
	encReq.Model = m.ModelPrefix + x.req.Model
	resp := rep.response(newID(x.spec.messageIDPrefix), encReq.Model, bodyLen/4)
	script := rep.streamScript(resp, rep.failure(x))

	if !x.req.Stream {
		if rep.eventDelay > 0 {
			// A slow non-streaming answer takes as long as its stream
			// would, so client disconnects can be tested without streaming.
			if err := sleepCtx(r.Context(), rep.eventDelay*time.Duration(len(script)-1)); err != nil {
				return err
			}
		}
		return m.complete(w, pw, codec, rep, resp, &encReq, x)
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	var out stream.Output = &stream.SSEOutput{}
	if x.jsonArray {
		h.Set("Content-Type", "application/json")
		out = &stream.JSONArrayOutput{}
	}
	if x.spec.streamOutput != nil {
		var ct string
		ct, out = x.spec.streamOutput()
		h.Set("Content-Type", ct)
	}
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if err := pw.flush(); err != nil {
		return err
	}
	enc := codec.NewStreamEncoder(&encReq)
	var frames translate.FrameWriter = out
	if x.dialect.renamesReasoning() {
		frames = reasoningRenamer{out}
	}
	for i := range script {
		st := &script[i]
		var err error
		switch st.kind {
		case stepEvent:
			out.Reset()
			enc.Encode(frames, &st.ev)
			if t := st.ev.Type; t == translate.EventMessageStop || t == translate.EventError {
				stream.EndOutput(out) // a JSON array's closing bracket
			}
			err = pw.writeUnit(out.Bytes())
		case stepRaw:
			err = pw.writeUnit(st.raw)
		case stepAbort:
			// Everything before the cut was flushed; net/http closes the
			// connection without ending the response properly.
			panic(http.ErrAbortHandler)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// complete writes a non-streaming answer. Stream faults have non-streaming
// twins: stream_error answers the overloaded error, stream_cut aborts the
// connection halfway through the body, stream_malformed sends a body that
// is not JSON.
func (m *Mock) complete(w http.ResponseWriter, pw *pacedWriter, codec translate.Codec, rep *reply, resp *translate.Response, encReq *translate.Request, x *exchange) error {
	switch rep.fault {
	case faultError, faultEarlyError:
		writeError(w, codec, rep.failure(x), "")
		return nil
	case faultMalformed:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		return pw.writeUnit([]byte("{not json"))
	}
	body, err := codec.EncodeResponse(resp, encReq)
	if err != nil {
		writeError(w, codec, translate.NewError(http.StatusInternalServerError, "louter_mock: encoding the response: "+err.Error()), "")
		return nil
	}
	if x.dialect.renamesReasoning() {
		body = renameReasoning(body)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if rep.fault == faultCut {
		if err := pw.writeUnit(body[:len(body)/2]); err != nil {
			return err
		}
		panic(http.ErrAbortHandler)
	}
	return pw.writeUnit(body)
}

// replayFixture writes a fixture file as the response body.
func (m *Mock) replayFixture(w http.ResponseWriter, pw *pacedWriter, codec translate.Codec, name string) error {
	data, ferr := m.loadFixture(name)
	if ferr != nil {
		writeError(w, codec, ferr, "")
		return nil
	}
	w.Header().Set("Content-Type", fixtureContentType(name))
	w.WriteHeader(http.StatusOK)
	for _, unit := range fixtureUnits(name, data) {
		if err := pw.writeUnit(unit); err != nil {
			return err
		}
	}
	return nil
}

// serveJournal answers GET (the journal as a JSON array, oldest first) and
// DELETE (clear it).
func (m *Mock) serveJournal(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		data, err := m.journal.marshal()
		if err != nil {
			writePlainError(w, http.StatusInternalServerError, "api_error", "louter_mock: encoding the journal: "+err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(data)
	case http.MethodDelete:
		m.journal.clear()
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, HEAD, DELETE")
		writePlainError(w, http.StatusMethodNotAllowed, "invalid_request_error", "louter_mock: "+r.URL.Path+" takes GET or DELETE, not "+r.Method)
	}
}

// writeError answers an error in the protocol's own shape.
func writeError(w http.ResponseWriter, codec translate.Codec, e *translate.Error, retryAfter string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(codec.EncodeError(e))
}

// writePlainError answers an error on a path no protocol serves, in a shape
// both OpenAI and Anthropic clients read a message from.
func writePlainError(w http.ResponseWriter, status int, typ, message string) {
	type errorBody struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	body, _ := json.Marshal(struct {
		Error errorBody `json:"error"`
	}{errorBody{typ, message}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Mock)(nil)
	_ caddy.Validator             = (*Mock)(nil)
	_ caddyhttp.MiddlewareHandler = (*Mock)(nil)
	_ caddyfile.Unmarshaler       = (*Mock)(nil)
)

// writeStatusJSON answers v as JSON with status.
func writeStatusJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
