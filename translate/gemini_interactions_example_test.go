package translate_test

import (
	"fmt"

	"github.com/louter/louter/translate"
)

// A stateless Interactions API turn (the whole history as steps, the
// function's result last), translated for an Anthropic backend; and the
// refusal of a request that continues a stored interaction, in the
// Interactions API's error shape.
func ExampleCodec_interactions() {
	interactions, _ := translate.Lookup(translate.ProtocolGeminiInteractions)
	anthropic, _ := translate.Lookup(translate.ProtocolAnthropic)

	req, err := interactions.DecodeRequest([]byte(`{
		"model": "gemini-3.5-flash", "store": false,
		"system_instruction": "You are terse.",
		"input": [
			{"type": "user_input", "content": [{"type": "text", "text": "Weather in Paris?"}]},
			{"type": "function_call", "id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}},
			{"type": "function_result", "call_id": "call_1", "name": "get_weather", "result": "sunny"}
		],
		"tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}],
		"generation_config": {"max_output_tokens": 256}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	req.Model = "claude-sonnet-4-6" // what a model route's rename does
	body, _ := anthropic.EncodeRequest(req)
	fmt.Println(string(body))

	_, err = interactions.DecodeRequest([]byte(`{"model": "gemini-3.5-flash", "input": "And then?", "previous_interaction_id": "v1_abc"}`))
	if e, ok := err.(*translate.Error); ok {
		fmt.Println(e.Status, e.Param)
		fmt.Println(string(interactions.EncodeError(e)))
	}
	// Output:
	// {"model":"claude-sonnet-4-6","max_tokens":256,"system":[{"type":"text","text":"You are terse."}],"messages":[{"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]},{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"get_weather","input":{"city": "Paris"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":[{"type":"text","text":"sunny"}]}]}],"tools":[{"name":"get_weather","input_schema":{"type": "object"}}]}
	// 400 previous_interaction_id
	// {"error":{"code":"invalid_request","message":"previous_interaction_id: interactions are not stored here (louter's stored_responses are disabled); send store:false and the whole conversation in input (user_input, model_output, thought, function_call and function_result steps)"}}
}
