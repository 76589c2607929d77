package caddymodule

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/limits"
	"github.com/louter/louter/translate"
)

// The refusals of client_keys.go and client_limits.go, worded and shaped
// as each provider answers them, so agents react as they do against the
// real API: re-prompt for a key on 401, give up on 403, back off on 429
// for Retry-After.

// writeAuthError answers a request refused by authentication in protocol
// p; model is the forbidden model of an authModel refusal. The row
// (protocols.go) words the 401s, or writes the refusal itself.
func writeAuthError(w http.ResponseWriter, p translate.Protocol, why authResult, model string) {
	row := rowOf(p)
	if row.authError != nil {
		row.authError(w, why, model)
		return
	}
	codec, _ := translate.Lookup(p)
	var e *translate.Error
	switch why {
	case authMissing:
		msg := row.keyMissing
		if msg == "" {
			msg = "louter: you didn't provide an API key (Authorization: Bearer)"
		}
		e = &translate.Error{Status: http.StatusUnauthorized, Kind: translate.ErrAuthentication, Message: msg}
	case authInvalid:
		msg := row.keyInvalid
		if msg == "" {
			msg = "louter: incorrect API key provided"
		}
		e = &translate.Error{Status: http.StatusUnauthorized, Kind: translate.ErrAuthentication, Message: msg, Code: "invalid_api_key"}
	default:
		e = &translate.Error{Status: http.StatusForbidden, Kind: translate.ErrPermission,
			Message: fmt.Sprintf("louter: this API key may not use model %q", model), Param: "model", Code: "model_not_allowed"}
	}
	_ = httpx.WriteError(w, codec, e)
}

// writeGeminiAuthError answers as Google's API does: an unknown key is a
// 400 INVALID_ARGUMENT with reason API_KEY_INVALID, no key at all a 403
// PERMISSION_DENIED.
func writeGeminiAuthError(w http.ResponseWriter, why authResult, model string) {
	status, name, reason := http.StatusForbidden, "PERMISSION_DENIED", ""
	var msg string
	switch why {
	case authMissing:
		msg, reason = "louter: method doesn't allow unregistered callers; send an API key (x-goog-api-key or ?key=)", "API_KEY_MISSING"
	case authInvalid:
		status, name, reason = http.StatusBadRequest, "INVALID_ARGUMENT", "API_KEY_INVALID"
		msg = "louter: API key not valid. Please pass a valid API key."
	default:
		msg, reason = fmt.Sprintf("louter: this API key may not use model %q", model), "MODEL_NOT_ALLOWED"
	}
	writeGeminiError(w, status, name, msg, map[string]any{
		"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "louter",
	})
}

// writeGeminiError writes Google's error envelope with the given details.
func writeGeminiError(w http.ResponseWriter, status int, name, msg string, details ...map[string]any) {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": status, "message": msg, "status": name, "details": details,
	}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeLimitError answers a request a limit refused with the provider's
// 429, its Retry-After and the rate-limit headers of its style.
func writeLimitError(w http.ResponseWriter, p translate.Protocol, ref *limits.Refusal) {
	retry := int64(math.Ceil(ref.RetryAfter.Seconds()))
	retry = max(retry, 1)
	h := w.Header()
	h.Set("Retry-After", strconv.FormatInt(retry, 10))
	setRateLimitHeaders(h, p, ref.Kind, ref.Window, time.Now())
	msg := "louter: rate limit exceeded for " + ref.Error()
	if write := rowOf(p).limitError; write != nil {
		write(w, msg, retry)
		return
	}
	e := &translate.Error{Status: http.StatusTooManyRequests, Kind: translate.ErrRateLimit, Message: msg}
	if ref.Kind == limits.KindBudget {
		e.Code = "insufficient_quota" // what OpenAI says when the money is gone
	}
	codec, _ := translate.Lookup(p)
	_ = httpx.WriteError(w, codec, e)
}

// writeGeminiLimitError answers a limit's refusal as Google's API does: a
// 429 RESOURCE_EXHAUSTED with a RetryInfo.
func writeGeminiLimitError(w http.ResponseWriter, msg string, retry int64) {
	writeGeminiError(w, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", msg, map[string]any{
		"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.FormatInt(retry, 10) + "s",
	})
}

// setRateLimitHeaders sets the rate-limit headers of protocol p for one
// window, as its row says (protocols.go); Gemini has none.
func setRateLimitHeaders(h http.Header, p translate.Protocol, k limits.Kind, win limits.Window, now time.Time) {
	if k != limits.KindRequests && k != limits.KindTokens {
		return
	}
	if set := rowOf(p).rateLimitHeaders; set != nil {
		set(h, k, win, now)
	}
}

// anthropicRateLimitHeaders sets Anthropic's
// anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}, the reset
// in RFC 3339.
func anthropicRateLimitHeaders(h http.Header, k limits.Kind, win limits.Window, _ time.Time) {
	pre := "Anthropic-Ratelimit-" + string(k) + "-"
	h.Set(pre+"Limit", strconv.FormatInt(win.Limit, 10))
	h.Set(pre+"Remaining", strconv.FormatInt(win.Remaining, 10))
	h.Set(pre+"Reset", win.Reset.UTC().Format(time.RFC3339))
}

// openAIRateLimitHeaders sets OpenAI's
// x-ratelimit-{limit,remaining,reset}-{requests,tokens}, the reset as a
// duration such as "6m0s".
func openAIRateLimitHeaders(h http.Header, k limits.Kind, win limits.Window, now time.Time) {
	h.Set("X-Ratelimit-Limit-"+string(k), strconv.FormatInt(win.Limit, 10))
	h.Set("X-Ratelimit-Remaining-"+string(k), strconv.FormatInt(win.Remaining, 10))
	h.Set("X-Ratelimit-Reset-"+string(k), max(win.Reset.Sub(now), 0).Round(time.Second).String())
}
