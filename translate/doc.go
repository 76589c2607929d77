// Package translate holds louter's internal representation (IR) of an LLM
// chat exchange and one codec per wire protocol. Every codec decodes its
// protocol into the IR and encodes the IR back into its protocol, so adding a
// protocol adds one codec and never a pair-specific translator.
//
// The package is pure: no I/O, no Caddy, no logging. Whatever a codec has to
// leave out is recorded on the Request (see Request.Drop) for the caller to
// log.
//
// # Files
//
// A codec's files carry its prefix (anthropic_, openai_chat_,
// openai_responses_, gemini_): request decoding and encoding, responses,
// streams, errors, and its answers to the optional interfaces below. The
// files without a prefix are shared by every protocol (the IR, the JSON
// scanner and writer, the stream watch's scan, the request scan, the
// dialect's tool naming, the context-overflow rules) and never switch on
// a protocol: what differs between protocols they ask the codec.
//
// # Optional interfaces
//
// Codec is what every protocol must do. What only some protocols do
// differently, a codec says by implementing an optional interface, which
// shared code finds on the codec registered for the protocol (Lookup):
//
//   - WatchCodec: follow a stream passed through untouched (StreamWatch):
//     its terminal event, its usage, an event that is not the protocol's.
//   - TopLevelCodec: the top-level request members ScanTopLevel reads
//     (TopLevelRules): model, stream, limits, system prompt, conversation,
//     and the wording of a repeated member.
//   - OverflowCodec: a context overflow in the words the protocol's
//     clients recognise.
//   - StatusCodec: the HTTP status a client of the protocol gets for an
//     error, where it differs from the error's own (Gemini's 503 for 529).
//   - ToolNamingCodec: the tool names a backend of the protocol accepts
//     and whether its answers are parsed for text tool calls (ToolNaming).
//   - UsageTimingCodec: whether the protocol's streams report the input
//     tokens early, which decides the input estimate of a translated
//     stream (TranslateRequest).
//   - DialectCodec: a codec applying one backend's Dialect (BackendCodec).
//
// A codec without one gets the default its documentation states, so a
// protocol registered from another package (a test's fake codec) works
// with every shared code path unchanged. A new protocol adds its codec's
// files and implements the interfaces whose defaults do not fit it; a new
// question shared code has about protocols adds an interface with a
// default, never a switch on the protocol.
//
// # One exchange
//
// TranslateRequest is the request side of a translated exchange (decode,
// rename, cap, tool names, encode, input estimate) and PassthroughBody the
// edit of one passed through; package stream's Translation is the
// response side. louter's handler and record's Replay both run these, so a
// replay translates as the handler did.
package translate
