// Package louter plugs louter's modules into Caddy. louter lets any coding
// agent talk to any LLM backend: it translates requests, responses and live
// streams between the LLM wire protocols (Anthropic Messages, OpenAI Chat
// Completions, OpenAI Responses, Gemini generateContent and Interactions,
// and the cloud forms of these on AWS Bedrock, Google Vertex AI and Azure)
// inside Caddy, in front of the stock reverse_proxy.
//
// This package holds no code: importing it registers the modules, which is
// what building Caddy with it does (from a checkout, ./xcaddy.sh build, or
// xcaddy build --with github.com/louter/louter@VERSION=PATH; see the README). It brings in http.handlers.louter (package caddymodule, the
// translating middleware) and http.handlers.louter_mock (package
// caddymodule/mock, a scripted LLM backend for tests and demos). The
// translation itself lives in package translate, the stream machinery in
// package stream and the parsing of self-hosted models' output in package
// dialect, none of which depends on Caddy.
package louter

import (
	_ "github.com/louter/louter/caddymodule"
	_ "github.com/louter/louter/caddymodule/mock"
)
