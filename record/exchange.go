// Package record holds louter's recorded exchanges: what a client sent,
// what louter sent the backend, what the backend answered (stream events
// with their timing) and what the client got, one JSON object per exchange
// in JSON Lines files. It writes them (Writer: asynchronous, rotated,
// size-capped), captures them as an exchange runs (Capture), and replays
// them through the current translators to show what changed (Replay).
//
// The package knows nothing of Caddy: the caddymodule package feeds a
// Capture from its handler and redacts credentials through Capture.Scrub.
package record

import (
	"encoding/json"
	"time"

	"github.com/louter/louter/translate"
)

// Version is the version of the record format, written in every record.
// A reader refuses records of a later version.
const Version = 1

// Exchange is one recorded exchange: one line of a recording.
type Exchange struct {
	// Version is the format version (Version).
	Version int `json:"version"`
	// Time is when the client's request arrived.
	Time time.Time `json:"time"`
	// ID identifies the exchange (Caddy's request UUID).
	ID string `json:"id"`

	// Client is the protocol the client spoke and the path it asked for.
	Client Endpoint `json:"client"`
	// Backend is the backend that answered (the last attempt of a
	// fallback chain), with what the replay needs to translate as louter
	// did: its protocol, dialect, model and max_tokens cap.
	Backend *Backend `json:"backend,omitempty"`
	// Stream is whether the client asked for a stream.
	Stream bool `json:"stream"`
	// Attempts is how many backends were asked (more than one when a
	// fallback chain moved on); only the last is recorded.
	Attempts int `json:"attempts,omitempty"`

	ClientRequest   *Request  `json:"client_request,omitempty"`
	BackendRequest  *Request  `json:"backend_request,omitempty"`
	BackendResponse *Response `json:"backend_response,omitempty"`
	ClientResponse  *Response `json:"client_response,omitempty"`

	// Dropped names what the translation left out (translate.Request.Dropped).
	Dropped []string `json:"dropped,omitempty"`
	// Error says why the exchange failed, when it did on louter's side:
	// the backend could not be reached, its connection broke, the client
	// went away.
	Error string `json:"error,omitempty"`
	// Truncated is set when the exchange outgrew the recording's
	// max_exchange_size: events past the cap were counted, not kept
	// (Response.EventsDropped), and a body past it is left out
	// (Response.BodyDropped).
	Truncated bool `json:"truncated,omitempty"`

	// secrets are the credentials of this exchange, redacted from the
	// record when it is written.
	secrets []string
}

// Endpoint is a protocol and the path it was spoken on.
type Endpoint struct {
	Protocol translate.Protocol `json:"protocol"`
	Path     string             `json:"path"`
}

// Backend is the backend of an exchange.
type Backend struct {
	// Name is the backend's name in the configuration.
	Name     string             `json:"name"`
	Protocol translate.Protocol `json:"protocol"`
	// Path is the path louter sent the request to.
	Path string `json:"path,omitempty"`
	// Model is the model the client asked for, BackendModel the one sent
	// to the backend (a route's rename).
	Model        string `json:"model,omitempty"`
	BackendModel string `json:"backend_model,omitempty"`
	// MaxTokens is the backend's max_tokens cap (0: none).
	MaxTokens int `json:"max_tokens,omitempty"`
	// Dialect is the backend's dialect setting (openai_chat only).
	Dialect *translate.Dialect `json:"dialect,omitempty"`
	// Passthrough is set when the client spoke the backend's protocol and
	// the bytes went through untranslated.
	Passthrough bool `json:"passthrough,omitempty"`
	// DropSampling is set when the backend refuses temperature, top_p
	// and top_k (an Anthropic backend on API version 2026-10-21, or a
	// Claude model of 4.7 or later), which louter then left out.
	DropSampling bool `json:"drop_sampling,omitempty"`
	// KeepBillingHeader is the backend's keep_billing_header: a translated
	// request kept Claude Code's billing line.
	KeepBillingHeader bool `json:"keep_billing_header,omitempty"`
	// ServerTools is the backend's server_tools policy: what a translated
	// request did with a server tool the backend cannot run.
	ServerTools translate.ServerToolPolicy `json:"server_tools,omitempty"`
	// ContextManagement is the backend's context_management setting
	// (translate.ContextEditing): how Anthropic's context edits reached
	// it.
	ContextManagement string `json:"context_management,omitempty"`
	// CacheKeyMember and CacheKey are the prompt-cache key louter set on
	// a translated request (prompt_cache_key: a hash of the conversation
	// and the client, derived from what the recording does not keep).
	CacheKeyMember string `json:"cache_key_member,omitempty"`
	CacheKey       string `json:"cache_key,omitempty"`
}

// Request is one side's request.
type Request struct {
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	// Query is the raw query, with credential parameters redacted.
	Query string `json:"query,omitempty"`
	// Header holds the allowlisted headers (never a credential header).
	Header map[string][]string `json:"header,omitempty"`
	// Body is the request body when it is JSON, BodyText otherwise.
	Body     json.RawMessage `json:"body,omitempty"`
	BodyText string          `json:"body_text,omitempty"`

	raw []byte // the body as captured (written by appendJSON)
}

// Response is one side's response: a JSON (or other) body, or the events
// of a stream.
type Response struct {
	Status int                 `json:"status"`
	Header map[string][]string `json:"header,omitempty"`
	// Body is a complete body when it is JSON, BodyText otherwise; a
	// stream has Events instead.
	Body     json.RawMessage `json:"body,omitempty"`
	BodyText string          `json:"body_text,omitempty"`
	// Events are a stream's events in order: server-sent events, or the
	// elements of a streamed JSON array.
	Events []Event `json:"events,omitempty"`
	// EventsDropped counts the events not kept past max_exchange_size.
	EventsDropped int `json:"events_dropped,omitempty"`
	// BodyDropped is the size of a body not kept past max_exchange_size.
	BodyDropped int `json:"body_dropped,omitempty"`

	raw []byte // the body as captured (written by appendJSON)
}

// Event is one stream event.
type Event struct {
	// T is when the event was complete, in milliseconds from the request's
	// start.
	T int64 `json:"t"`
	// Name is the SSE event name, if any.
	Name string `json:"event,omitempty"`
	// Data is the event's data when it is JSON, Text otherwise (OpenAI's
	// final "[DONE]").
	Data json.RawMessage `json:"data,omitempty"`
	Text string          `json:"text,omitempty"`

	raw []byte // the data as captured (written by appendJSON)
}

// Payload returns the event's data as it was sent.
func (e *Event) Payload() []byte {
	if e.Data != nil {
		return e.Data
	}
	return []byte(e.Text)
}

// BodyBytes returns a request's body as it was sent.
func (r *Request) BodyBytes() []byte {
	if r == nil {
		return nil
	}
	if r.Body != nil {
		return r.Body
	}
	return []byte(r.BodyText)
}

// BodyBytes returns a response's complete body.
func (r *Response) BodyBytes() []byte {
	if r.Body != nil {
		return r.Body
	}
	return []byte(r.BodyText)
}
