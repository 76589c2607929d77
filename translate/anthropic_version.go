package translate

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// The Messages API has two versions in use, chosen per request by the
// anthropic-version header. 2026-10-21 only tightens validation: it
// refuses temperature, top_p and top_k (even at their defaults), a
// document block in an assistant message, and a non-empty citations list
// on a user's text block; event names, block types and tools are the
// same. Claude models from 4.7 on refuse temperature, top_p and top_k on
// 2023-06-01 as well. So a body valid for 2026-10-21 is valid for
// 2023-06-01, and the other way round needs the sampling parameters left
// out: CheckAnthropicVersion answers a client of the new version as the
// API would whatever the backend, and AnthropicDropsSampling with
// DropAnthropicSampling / DropSampling make any client's request
// acceptable to a backend on the new version or a new model.

// The Messages API versions.
const (
	AnthropicVersion2023 = "2023-06-01"
	AnthropicVersion2026 = "2026-10-21"
)

// KnownAnthropicVersion reports whether v is a Messages API version louter
// knows.
func KnownAnthropicVersion(v string) bool {
	return v == AnthropicVersion2023 || v == AnthropicVersion2026
}

// samplingParams are the members 2026-10-21 and Claude ≥ 4.7 refuse, in
// the order they are checked.
var samplingParams = [...]string{"temperature", "top_p", "top_k"}

// CheckAnthropicVersion refuses, as the Messages API does, a request body
// that the client's API version (its anthropic-version header) does not
// allow: on 2026-10-21, temperature, top_p or top_k, a document block in
// an assistant message, or citations on a user's text block. Any other
// version allows them, and the body is not read.
func CheckAnthropicVersion(version string, body []byte) *Error {
	if version != AnthropicVersion2026 {
		return nil
	}
	top := gjson.ParseBytes(body)
	for _, p := range samplingParams {
		if top.Get(p).Exists() {
			return &Error{Status: 400, Kind: ErrInvalidRequest, Param: p,
				Message: p + ": Extra inputs are not permitted (anthropic-version " + AnthropicVersion2026 + ")"}
		}
	}
	for i, m := range top.Get("messages").Array() {
		role := m.Get("role").String()
		for j, b := range m.Get("content").Array() {
			at := "messages." + strconv.Itoa(i) + ".content." + strconv.Itoa(j)
			switch t := b.Get("type").String(); {
			case role == "assistant" && t == "document":
				return &Error{Status: 400, Kind: ErrInvalidRequest, Param: at,
					Message: at + ": document blocks are not permitted in assistant messages (anthropic-version " + AnthropicVersion2026 + ")"}
			case role == "user" && t == "text" && len(b.Get("citations").Array()) > 0:
				return &Error{Status: 400, Kind: ErrInvalidRequest, Param: at + ".citations",
					Message: at + ".citations: citations are not permitted on user text blocks (anthropic-version " + AnthropicVersion2026 + ")"}
			}
		}
	}
	return nil
}

// AnthropicDropsSampling reports whether an Anthropic backend refuses
// temperature, top_p and top_k: it speaks version 2026-10-21, or the model
// is a Claude model of version 4.7 or later (claude-opus-4-7,
// anthropic.claude-sonnet-5-v1:0, ...), which refuses them on any version.
func AnthropicDropsSampling(version, model string) bool {
	if version == AnthropicVersion2026 {
		return true
	}
	major, minor, ok := claudeVersion(model)
	return ok && (major > 4 || major == 4 && minor >= 7)
}

// claudeVersion reads the version of a Claude model id of the current
// naming, claude-{family}-{major}[-{minor}], found anywhere in the id (a
// Bedrock or Vertex id wraps it). A date (claude-opus-4-20250514) is not a
// minor version; the older naming (claude-3-5-sonnet) is not read, and
// those models allow sampling parameters anyway.
func claudeVersion(model string) (major, minor int, ok bool) {
	s := strings.ToLower(model)
	for _, family := range [...]string{"opus", "sonnet", "haiku"} {
		i := strings.Index(s, "claude-"+family+"-")
		if i < 0 {
			continue
		}
		rest := s[i+len("claude-"+family+"-"):]
		major, rest, ok = leadingNumber(rest, 2)
		if !ok {
			return 0, 0, false
		}
		if r, found := strings.CutPrefix(rest, "-"); found {
			if n, _, isMinor := leadingNumber(r, 2); isMinor {
				minor = n
			}
		}
		return major, minor, true
	}
	return 0, 0, false
}

// leadingNumber reads the decimal number s starts with, of at most max
// digits and not followed by another digit.
func leadingNumber(s string, max int) (int, string, bool) {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 || n > max {
		return 0, s, false
	}
	v, _ := strconv.Atoi(s[:n])
	return v, s[n:], true
}

// samplingDropReason is the reason recorded for a sampling parameter left
// out for an Anthropic backend that refuses it.
const samplingDropReason = "the Anthropic backend's API version or model refuses it"

// DropAnthropicSampling removes temperature, top_p and top_k from an
// Anthropic request body, for a backend that refuses them
// (AnthropicDropsSampling). It returns body itself when none is present,
// and the entries it dropped ("field: reason", as Request.Dropped).
func DropAnthropicSampling(body []byte) (out []byte, dropped []string) {
	out = body
	for _, p := range samplingParams {
		if !bytes.Contains(out, []byte(`"`+p+`"`)) || !gjson.GetBytes(out, p).Exists() {
			continue
		}
		edited, err := sjson.DeleteBytes(out, p)
		if err != nil {
			continue
		}
		out = edited
		dropped = append(dropped, p+": "+samplingDropReason)
	}
	return out, dropped
}

// DropSampling leaves temperature, top_p and top_k out of a decoded
// request bound for an Anthropic backend that refuses them, recording each
// it removes.
func DropSampling(r *Request) {
	if r.Temperature != nil {
		r.Temperature = nil
		r.Drop("temperature", samplingDropReason)
	}
	if r.TopP != nil {
		r.TopP = nil
		r.Drop("top_p", samplingDropReason)
	}
	if r.TopK != nil {
		r.TopK = nil
		r.Drop("top_k", samplingDropReason)
	}
}

// BackendEdit is the RequestRoute.Edit of a backend: DropSampling when
// the backend refuses sampling parameters (AnthropicDropsSampling), and
// StripBillingHeader unless the backend keeps Claude Code's billing line.
// nil when neither applies.
func BackendEdit(dropSampling, stripBilling bool) func(*Request) {
	if !dropSampling && !stripBilling {
		return nil
	}
	return func(r *Request) {
		if dropSampling {
			DropSampling(r)
		}
		if stripBilling {
			StripBillingHeader(r)
		}
	}
}
