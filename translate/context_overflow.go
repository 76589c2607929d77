package translate

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// A prompt that does not fit the model's context window is the one error a
// coding agent handles by itself: Claude Code compacts the conversation
// when it reads "prompt is too long: N tokens > M maximum", Codex when the
// code is context_length_exceeded, Gemini CLI on Gemini's own wording. Each
// server words it differently, so the error decoders recognise every known
// wording (overflowFrom) and the encoders reword it for their client
// (forClient). testdata/context_overflow holds the servers' published
// messages.

// overflowFigures pulls the prompt size and the context window out of the
// servers' messages. Each pattern has named groups n (prompt tokens) and m
// (context window); either may be missing.
var overflowFigures = []*regexp.Regexp{
	// Anthropic: "prompt is too long: 208656 tokens > 200000 maximum".
	regexp.MustCompile(`(?i)prompt is too long:\s*(?P<n>\d+)\s*tokens?\s*>\s*(?P<m>\d+)`),
	// Gemini: "The input token count (1200293) exceeds the maximum number
	// of tokens allowed (1048576)."
	regexp.MustCompile(`(?i)input token count \((?P<n>\d+)\) exceeds the maximum number of tokens allowed \((?P<m>\d+)\)`),
	// llama.cpp: "request (4476 tokens) exceeds the available context size
	// (4096 tokens)".
	regexp.MustCompile(`(?i)request \((?P<n>\d+) tokens\) exceeds the available context size \((?P<m>\d+) tokens\)`),
	// OpenAI and vLLM: "This model's maximum context length is 8192 tokens.
	// However, your messages resulted in 8227 tokens." / "However, you
	// requested 122946 tokens (112946 in the messages, 10000 in the
	// completion)." / "...and your request has 3500 input tokens"; OpenRouter:
	// "This endpoint's maximum context length is 32768 tokens. However, you
	// requested about 42832 tokens".
	regexp.MustCompile(`(?i)maximum context length is (?P<m>\d+) tokens.*?(?:resulted in|requested(?: about)?|has) (?P<n>\d+)(?: input)? tokens`),
	regexp.MustCompile(`(?i)maximum context length is (?P<m>\d+) tokens`),
}

// overflowMarkers are lower-case phrases that mark an error message as a
// context overflow when no code says so.
var overflowMarkers = [...]string{
	"prompt is too long",
	"input is too long for requested model",
	"maximum context length",
	"exceeds the context window",
	"exceeds the maximum number of tokens allowed",
	"exceeds the available context size",
	"context_length_exceeded",
	"context length exceeded",
}

// overflowCodes are the codes and error types that name an overflow.
var overflowCodes = [...]string{"context_length_exceeded", "exceed_context_size_error"}

// overflowFrom turns e into an ErrContextOverflow when it reports one; obj
// is the upstream's error object, where llama.cpp puts the figures
// (n_prompt_tokens, n_ctx), and typ its type. A code says so whatever the
// status (an in-stream error has none); the wording counts only for an
// invalid request: a 5xx that mentions the context window is still a 5xx.
func overflowFrom(e *Error, obj gjson.Result, typ string) *Error {
	known := false
	for _, c := range overflowCodes {
		if e.Code == c || typ == c {
			known = true
		}
	}
	if !known && (e.Kind == ErrInvalidRequest || e.Kind == ErrRequestTooLarge) {
		msg := strings.ToLower(e.Message)
		for _, m := range overflowMarkers {
			if strings.Contains(msg, m) {
				known = true
				break
			}
		}
	}
	if !known {
		return e
	}
	e.Kind, e.Status = ErrContextOverflow, http.StatusBadRequest
	e.PromptTokens, e.ContextLimit = overflowParse(e.Message)
	if n := obj.Get("n_prompt_tokens"); n.Type == gjson.Number {
		e.PromptTokens = int(n.Int())
	}
	if m := obj.Get("n_ctx"); m.Type == gjson.Number {
		e.ContextLimit = int(m.Int())
	}
	return e
}

// overflowParse reads the figures of an overflow message; 0 for those it
// does not give. Where vLLM counts the completion in ("you requested N
// tokens (P in the messages, C in the completion)"), N is the figure: it is
// what went over the window.
func overflowParse(msg string) (prompt, limit int) {
	for _, re := range overflowFigures {
		sub := re.FindStringSubmatch(msg)
		if sub == nil {
			continue
		}
		for i, name := range re.SubexpNames() {
			n, err := strconv.Atoi(sub[i])
			if err != nil {
				continue
			}
			switch name {
			case "n":
				prompt = n
			case "m":
				limit = n
			}
		}
		return prompt, limit
	}
	return 0, 0
}

// forClient returns e as protocol p's clients expect it: an overflow
// becomes p's own invalid-request error, worded by p's codec
// (OverflowCodec) or, by default, as OpenAI-compatible servers word it
// (overflowOpenAI); other errors are returned as they are.
func (e *Error) forClient(p Protocol) *Error {
	if e == nil || e.Kind != ErrContextOverflow {
		return e
	}
	if c, ok := codecAs[OverflowCodec](p); ok {
		return c.ClientOverflow(e)
	}
	return overflowOpenAI(e, "messages")
}

// overflowInvalid is the copy of the overflow e that a client's wording
// starts from: an invalid request, as every provider reports it.
func overflowInvalid(e *Error) *Error {
	c := *e
	c.Kind, c.Status = ErrInvalidRequest, http.StatusBadRequest
	return &c
}

// overflowOpenAI is the overflow e as OpenAI words it, and the
// OpenAI-compatible servers after it (vLLM, OpenRouter, llama.cpp's
// OpenAI endpoint): code context_length_exceeded on param, and OpenAI's
// message when both figures are known and the upstream's does not read so
// already.
func overflowOpenAI(e *Error, param string) *Error {
	c := overflowInvalid(e)
	c.Code, c.Param = "context_length_exceeded", param
	if n, m := e.PromptTokens, e.ContextLimit; n > 0 && m > 0 && !strings.Contains(e.Message, "maximum context length") {
		c.Message = "This model's maximum context length is " + strconv.Itoa(m) + " tokens. However, your messages resulted in " + strconv.Itoa(n) + " tokens. Please reduce the length of the messages."
	}
	return c
}

// overflowWordedOpenAI reports whether the overflow e reads as OpenAI's
// clients expect: they go by the code.
func overflowWordedOpenAI(e *Error) bool { return e.Code == "context_length_exceeded" }

// OverflowWordedFor reports whether e, an overflow decoded from a backend
// of protocol p, already says so as p's clients expect (OverflowCodec): an
// error passed on untranslated then needs no rewording. It is false for
// any other error.
func (e *Error) OverflowWordedFor(p Protocol) bool {
	if e == nil || e.Kind != ErrContextOverflow {
		return false
	}
	if c, ok := codecAs[OverflowCodec](p); ok {
		return c.OverflowWorded(e)
	}
	return overflowWordedOpenAI(e)
}
