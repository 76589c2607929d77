package caddymodule

import (
	"strconv"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/louter/louter/translate"
)

// unmarshalWhen parses one "when" line of a model block into a
// RouteCondition; the dispenser is on "when". Syntax:
//
//	when <test> [and <test>...] <backend> [<rename>]
//
// where each test is one of
//
//	images                   an image or a document in the request
//	tokens > <n>             input estimated above n tokens
//	thinking                 thinking / reasoning requested
//	tools                    any tool offered
//	tool <name>              a tool of that name or type (web_search, googleSearch, ...)
//	client <protocol>        the client speaks anthropic|openai_chat|openai_responses|gemini
//	header <name> <glob>     a request header whose value matches the glob ("*": any)
func unmarshalWhen(d *caddyfile.Dispenser) (RouteCondition, error) {
	var c RouteCondition
	args := d.RemainingArgs()
	i := 0
	next := func() (string, bool) {
		if i >= len(args) {
			return "", false
		}
		i++
		return args[i-1], true
	}
	for {
		test, ok := next()
		if !ok {
			return c, d.Err("when: a test and a backend are required")
		}
		switch test {
		case "images":
			c.Images = true
		case "thinking":
			c.Thinking = true
		case "tools":
			c.Tools = true
		case "tokens":
			n, ok := next()
			if ok && n == ">" {
				n, ok = next()
			}
			v, err := strconv.Atoi(n)
			if !ok || err != nil || v <= 0 {
				return c, d.Errf("when tokens: want 'tokens > <n>' with a positive n, got %q", n)
			}
			c.TokensAbove = v
		case "tool":
			name, ok := next()
			if !ok {
				return c, d.Err("when tool: a tool name is required")
			}
			c.Tool = name
		case "client":
			p, ok := next()
			if !ok {
				return c, d.Err("when client: a protocol is required")
			}
			if _, _, known := servedProtocol(translate.Protocol(p)); !known {
				return c, d.Errf("when client: unknown protocol %q (known: %s)", p, knownProtocols())
			}
			c.Client = translate.Protocol(p)
		case "header":
			name, ok1 := next()
			value, ok2 := next()
			if !ok1 || !ok2 {
				return c, d.Err("when header: want 'header <name> <glob>'")
			}
			c.Header, c.HeaderValue = name, value
		default:
			return c, d.Errf("when: unknown test '%s' (images, tokens, thinking, tools, tool, client, header)", test)
		}
		// After a test: "and" and another test, or the backend.
		rest := args[i:]
		if len(rest) > 0 && rest[0] == "and" {
			i++
			continue
		}
		switch len(rest) {
		case 1:
			c.Backend = rest[0]
		case 2:
			c.Backend, c.Rename = rest[0], rest[1]
		default:
			return c, d.Errf("when %s: want a backend and an optional model name after the test, got %d arguments", c.String(), len(rest))
		}
		return c, nil
	}
}
