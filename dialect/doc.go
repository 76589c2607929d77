// Package dialect reads what self-hosted models leave in the text of an
// OpenAI-compatible answer. A dialect is how one such server (llama.cpp's
// llama-server, vLLM, Ollama, SGLang) and the model behind it differ from
// OpenAI's own Chat Completions API. Most of all, a server whose tool-call
// or reasoning parser is off leaves the model's markup in the content:
// Hermes or Qwen3-Coder tool calls, <think> blocks, gpt-oss harmony
// channels (REFERENCE §6). translate.Dialect holds one backend's settings;
// the request side (tool names and call ids rewritten for the backend,
// tools rendered into the prompt, dropped parameters) is translate's OpenAI
// Chat request encoder. This package is the response side:
//
//   - NewDecoder wraps a backend's translate.StreamDecoder. The text
//     goes through a ContentParser; calls and reasoning the server did
//     parse pass through; tool names and call ids rewritten for the
//     backend get the client's back. Response does the same for a
//     complete response.
//   - ContentParser is the streaming state machine behind both: a value
//     per content stream, fed pieces of text, giving Segments of text,
//     reasoning and tool calls. Text flows out as it arrives, apart from a
//     suffix that may begin a marker; a tool call is buffered and emitted
//     whole. Its marker scan (marker_scan.go) lets it jump from '<' to
//     '<'; each format's parsing has its own file: hermes_call.go,
//     qwen3coder_call.go (values typed by the tool's schema,
//     schema_values.go), harmony.go, and content_call.go for buffering a
//     call whatever its format.
//
// Like translate and stream, the package imports nothing from Caddy and can
// be used on its own: wrap the decoder given to stream.NewTranscoder, or the
// response given to an encoder.
//
// # Adding a dialect
//
// A new text format for tool calls or reasoning:
//
//  1. Name it: a ToolCallFormat or ReasoningFormat constant in
//     translate/dialect.go, accepted by Dialect.Validate, which the
//     Caddyfile and JSON configuration read.
//  2. Recognise it: its markers in marker_scan.go (every marker starts
//     with '<' and holds no other '<'; a format that breaks this needs the
//     scan changed), and in NewContentParser which markers open it for
//     the new setting (and for auto, if it is safe to look for there).
//  3. Parse it: a file named after the format that turns a buffered block
//     into Segments, as hermes_call.go does for a <tool_call> block, or a
//     family of states, as harmony.go does for a channel format. A block
//     that cannot be read goes back to the text it was, with a warning.
//  4. Test it: cases in content_parser_test.go, which feeds each one cut
//     at every byte and seeds FuzzContentParser with it (add the setting to
//     contentFuzzConfig); a fixture of the server's stream under the
//     repository's testdata/dialects/ with a row in dialectCases, whose
//     goldens for every client protocol are written by
//     go test ./dialect -run TestDialectTranscode -update.
//
// If the model needs the tools in its prompt (Dialect.ToolsInPrompt), the
// rendering is translate/openai_chat_prompt_tools.go, and the mock backend
// (caddymodule/mock/dialect.go) can answer in the format for integration
// tests.
package dialect
