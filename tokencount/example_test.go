package tokencount_test

import (
	"fmt"

	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// Count counts a request as the backend's API would: the same text costs
// each provider its own framing, and a caller may describe an API of its
// own.
func ExampleCount() {
	req := &translate.Request{
		System: []translate.Part{{Type: translate.PartText, Text: "You are terse."}},
		Messages: []translate.Message{{Role: translate.RoleUser, Parts: []translate.Part{
			{Type: translate.PartText, Text: "What is the capital of France?"},
		}}},
	}
	fmt.Println(tokencount.Count(req, tokencount.OpenAI, "gpt-5"))
	fmt.Println(tokencount.Count(req, tokencount.Anthropic, "claude-sonnet-4-5"))
	fmt.Println(tokencount.Count(req, tokencount.Gemini, "gemini-2.5-pro"))
	// An API that adds 2 tokens a message and nothing else.
	fmt.Println(tokencount.Count(req, &tokencount.Framing{Message: 2}, "my-model"))
	// Output:
	// 20
	// 23
	// 18
	// 15
}
