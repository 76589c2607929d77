package translate_test

import (
	"fmt"

	"github.com/louter/louter/translate"
)

// A request as Claude Code sends it (Anthropic Messages), translated for an
// OpenAI Chat Completions backend.
func ExampleCodec_requestTranslation() {
	anthropic, _ := translate.Lookup(translate.ProtocolAnthropic)
	openai, _ := translate.Lookup(translate.ProtocolOpenAIChat)

	req, err := anthropic.DecodeRequest([]byte(`{
		"model": "claude-sonnet-4-5",
		"max_tokens": 1024,
		"system": "You are terse.",
		"messages": [{"role": "user", "content": "What is 2 + 2?"}]
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	req.Model = "gpt-5.5" // what a model route's rename does
	body, err := openai.EncodeRequest(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(body))
	// Output:
	// {"model":"gpt-5.5","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"What is 2 + 2?"}],"max_completion_tokens":1024}
}

// A request the codec cannot take yields a *translate.Error with the status
// to answer and the offending field; the client's codec writes it in the
// client's protocol.
func ExampleCodec_badRequest() {
	anthropic, _ := translate.Lookup(translate.ProtocolAnthropic)
	_, err := anthropic.DecodeRequest([]byte(`{"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": "hi"}`))
	if e, ok := err.(*translate.Error); ok {
		fmt.Println(e.Status, e.Param)
		fmt.Println(string(anthropic.EncodeError(e)))
	}
	// Output:
	// 400 messages
	// {"type":"error","error":{"type":"invalid_request_error","message":"messages: Input should be a valid list"}}
}
