package mock

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/louter/louter/translate"
)

// ScenarioHeader selects the scenario of one request; it wins over a marker
// in the prompt and over default_scenario.
const ScenarioHeader = "X-Mock-Scenario"

// fixtureScenario is the prefix of the scenario that replays a file:
// "fixture=NAME".
const fixtureScenario = "fixture="

// slowEventDelay is the pause between events of the slow scenario, long
// enough for a test to disconnect mid-stream.
const slowEventDelay = 200 * time.Millisecond

// exchange is what a scenario answers: one decoded request to one mock.
type exchange struct {
	mock *Mock
	spec *protocolSpec
	req  *translate.Request
	// jsonArray frames the stream as a JSON array (Gemini without alt=sse).
	jsonArray bool
	// dialect is how an OpenAI Chat answer is written.
	dialect dialect
	// credential is the API key the request carried, for the scenarios
	// that echo it as careless backends do.
	credential string
	// overflowWording is the X-Mock-Overflow header (overflow.go).
	overflowWording string
}

// scenarioFunc builds a scenario's reply.
type scenarioFunc func(x *exchange) *reply

// scenarios maps scenario names to their scripts. "fixture=FILE" is handled
// apart, since its name carries an argument.
var scenarios = map[string]scenarioFunc{
	"text":               func(x *exchange) *reply { return x.textReply(x.greeting()) },
	"echo":               echoScenario,
	"tool":               toolScenario,
	"parallel_tools":     parallelToolsScenario,
	"reasoning":          reasoningScenario,
	"long":               longScenario,
	"agent":              agentScenario,
	"web_search":         webSearchScenario,
	"error_400":          errorScenario(http.StatusBadRequest, "louter_mock scenario error_400: invalid request"),
	"error_401":          errorScenario(http.StatusUnauthorized, "louter_mock scenario error_401: invalid API key"),
	"error_429":          errorScenario(http.StatusTooManyRequests, "louter_mock scenario error_429: rate limit exceeded"),
	"error_500":          errorScenario(http.StatusInternalServerError, "louter_mock scenario error_500: internal server error"),
	"error_overloaded":   overloadedScenario,
	"stream_error":       faultScenario(faultError),
	"stream_error_early": faultScenario(faultEarlyError),
	"error_echo_key":     echoKeyErrorScenario,
	"stream_error_echo_key": func(x *exchange) *reply {
		r := faultScenario(faultError)(x)
		r.failErr = &translate.Error{Status: http.StatusBadGateway, Kind: translate.ErrAPI, Message: echoKeyMessage(x)}
		return r
	},
	"stream_cut":       faultScenario(faultCut),
	"stream_malformed": faultScenario(faultMalformed),
	"slow": func(x *exchange) *reply {
		r := x.textReply(x.greeting())
		r.eventDelay = slowEventDelay
		return r
	},
}

// ScenarioNames lists the scenarios, sorted, "fixture=FILE" included.
func ScenarioNames() []string {
	names := make([]string, 0, len(scenarios)+1)
	for name := range scenarios {
		names = append(names, name)
	}
	names = append(names, fixtureScenario+"FILE")
	sort.Strings(names)
	return names
}

// knownScenario reports whether name is a scenario.
func knownScenario(name string) bool {
	if file, ok := strings.CutPrefix(name, fixtureScenario); ok {
		return file != ""
	}
	_, ok := scenarios[name]
	return ok
}

// scenarioMarker finds "[mock:NAME]" in a prompt.
var scenarioMarker = regexp.MustCompile(`\[mock:([^\]\s]+)\]`)

// selectScenario picks the scenario of a request, first match wins: the
// X-Mock-Scenario header, a [mock:NAME] marker in the last user message,
// the configured default.
func selectScenario(r *http.Request, req *translate.Request, def string) string {
	if h := strings.TrimSpace(r.Header.Get(ScenarioHeader)); h != "" {
		return h
	}
	if m := lastMessage(req, translate.RoleUser); m != nil {
		if sub := scenarioMarker.FindStringSubmatch(messageText(m, false)); sub != nil {
			return sub[1]
		}
	}
	return def
}

// reply runs the named scenario.
func (x *exchange) reply(name string) *reply {
	if file, ok := strings.CutPrefix(name, fixtureScenario); ok && file != "" {
		return &reply{fixture: file}
	}
	if fn := scenarios[name]; fn != nil {
		return fn(x)
	}
	return &reply{err: translate.BadRequest(fmt.Sprintf("louter_mock: unknown scenario %q (known: %s)", name, strings.Join(ScenarioNames(), ", ")))}
}

func (x *exchange) greeting() string {
	return "Hello from louter_mock (" + x.mock.Name + ")."
}

// textReply answers text, one word per delta.
func (x *exchange) textReply(text string) *reply {
	return &reply{blocks: []block{{kind: translate.PartText, deltas: words(text)}}, stop: translate.StopEndTurn}
}

// toolCall is a tool call block with arguments streamed in fragments.
func (x *exchange) toolCall(name, args string) block {
	return block{kind: translate.PartToolCall, callID: newID(x.spec.toolCallIDPrefix) + x.spec.toolCallIDSuffix, name: name, deltas: fragments(args)}
}

func echoScenario(x *exchange) *reply {
	text := lastUserText(x.req)
	if text == "" {
		text = "(no user text)"
	}
	return x.textReply(text)
}

// lastUserText is the text of the request's last user message.
func lastUserText(req *translate.Request) string {
	if m := lastMessage(req, translate.RoleUser); m != nil {
		return messageText(m, false)
	}
	return ""
}

func toolScenario(x *exchange) *reply {
	if len(x.req.Tools) == 0 {
		return &reply{err: translate.BadRequest("louter_mock scenario tool: the request has no tools")}
	}
	t := &x.req.Tools[0]
	return &reply{blocks: []block{x.toolCall(t.Name, synthesizeArguments(t.Schema))}, stop: translate.StopToolUse}
}

func parallelToolsScenario(x *exchange) *reply {
	if len(x.req.Tools) == 0 {
		return &reply{err: translate.BadRequest("louter_mock scenario parallel_tools: the request has no tools")}
	}
	first, second := &x.req.Tools[0], &x.req.Tools[0]
	if len(x.req.Tools) > 1 {
		second = &x.req.Tools[1]
	}
	return &reply{
		blocks: []block{
			x.toolCall(first.Name, synthesizeArguments(first.Schema)),
			x.toolCall(second.Name, synthesizeArguments(second.Schema)),
		},
		stop: translate.StopToolUse,
	}
}

func reasoningScenario(x *exchange) *reply {
	thinking := block{kind: translate.PartThinking, deltas: words("Let me think about this.")}
	if x.spec.signsThinking {
		thinking.signature = newID("mock-signature-")
	}
	r := x.textReply(x.greeting())
	r.blocks = append([]block{thinking}, r.blocks...)
	return r
}

// longDeltas is the number of text deltas of the long scenario.
const longDeltas = 200

func longScenario(*exchange) *reply {
	deltas := make([]string, longDeltas)
	for i := range deltas {
		deltas[i] = fmt.Sprintf("word%d ", i+1)
	}
	return &reply{blocks: []block{{kind: translate.PartText, deltas: deltas}}, stop: translate.StopEndTurn}
}

func errorScenario(status int, message string) scenarioFunc {
	return func(*exchange) *reply {
		r := &reply{err: translate.NewError(status, message)}
		if status == http.StatusTooManyRequests {
			r.retryAfter = "7"
		}
		return r
	}
}

// overloadedScenario answers with the provider's own overloaded error:
// Anthropic's 529 overloaded_error, a 503 from the others.
func overloadedScenario(x *exchange) *reply {
	return &reply{err: &translate.Error{Status: x.spec.overloadedStatus, Kind: translate.ErrOverloaded, Message: "louter_mock scenario error_overloaded: overloaded"}}
}

func faultScenario(f fault) scenarioFunc {
	return func(x *exchange) *reply {
		r := x.textReply(x.greeting())
		r.fault = f
		return r
	}
}

// newID returns prefix followed by 24 random hex digits.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return prefix + hex.EncodeToString(b[:])
}

// lastMessage returns the last message with the given role, or nil.
func lastMessage(req *translate.Request, role translate.Role) *translate.Message {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == role {
			return &req.Messages[i]
		}
	}
	return nil
}

// systemReminderPrefix starts the context blocks Claude Code adds to user
// messages; they may quote things that are not the user's command.
const systemReminderPrefix = "<system-reminder>"

// messageText joins the text parts of a message, optionally leaving out
// Claude Code's system reminders.
func messageText(m *translate.Message, skipReminders bool) string {
	var sb strings.Builder
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Type != translate.PartText || (skipReminders && strings.HasPrefix(strings.TrimSpace(p.Text), systemReminderPrefix)) {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(p.Text)
	}
	return sb.String()
}

// echoKeyErrorScenario answers 401 quoting the key it was sent, and the
// address of a socket, as some OpenAI-compatible servers and gateways do:
// what a proxy must not pass on to its clients.
func echoKeyErrorScenario(x *exchange) *reply {
	return &reply{err: &translate.Error{Status: http.StatusUnauthorized, Kind: translate.ErrAuthentication, Message: echoKeyMessage(x)}}
}

func echoKeyMessage(x *exchange) string {
	return "Incorrect API key provided: " + x.credential + " (seen by 10.1.2.3:8443)"
}

// receivedCredential returns the API key a request carried, in any of the
// four protocols' places, or the access key id and session token of a
// SigV4 signature.
func receivedCredential(r *http.Request) string {
	if rest, ok := strings.CutPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="); ok {
		akid, _, _ := strings.Cut(rest, "/")
		return akid + " with the security token " + r.Header.Get("X-Amz-Security-Token")
	}
	for _, h := range []string{"X-Api-Key", "X-Goog-Api-Key", "Api-Key"} {
		if v := r.Header.Get(h); v != "" {
			return v
		}
	}
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return v
	}
	return r.URL.Query().Get("key")
}
