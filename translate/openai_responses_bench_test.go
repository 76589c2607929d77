package translate

import (
	"fmt"
	"testing"
)

// respBenchStream is a Responses backend's stream: 150 text deltas, then a
// function call in 48 argument fragments, and response.completed.
func respBenchStream() (names []string, frames [][]byte) {
	add := func(name, data string) {
		names = append(names, name)
		frames = append(frames, []byte(data))
	}
	seq := 0
	next := func() int { seq++; return seq - 1 }
	add("response.created", fmt.Sprintf(`{"type":"response.created","sequence_number":%d,"response":{"id":"resp_bench","object":"response","status":"in_progress","model":"gpt-5.1","output":[],"usage":null}}`, next()))
	add("response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","sequence_number":%d,"output_index":0,"item":{"id":"msg_bench","type":"message","status":"in_progress","content":[],"role":"assistant"}}`, next()))
	for i := range 150 {
		add("response.output_text.delta", fmt.Sprintf(`{"type":"response.output_text.delta","sequence_number":%d,"item_id":"msg_bench","output_index":0,"content_index":0,"delta":"word%d \"quoted\" ","logprobs":[],"obfuscation":"Xq3"}`, next(), i))
	}
	add("response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","sequence_number":%d,"output_index":0,"item":{"id":"msg_bench","type":"message","status":"completed","content":[{"type":"output_text","text":"…","annotations":[]}],"role":"assistant"}}`, next()))
	add("response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","sequence_number":%d,"output_index":1,"item":{"id":"fc_bench","type":"function_call","status":"in_progress","arguments":"","call_id":"call_bench","name":"write_file"}}`, next()))
	for i := range 48 {
		add("response.function_call_arguments.delta", fmt.Sprintf(`{"type":"response.function_call_arguments.delta","sequence_number":%d,"item_id":"fc_bench","output_index":1,"delta":"{\"k%d\": \"v\"}","obfuscation":"H2d0"}`, next(), i))
	}
	add("response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","sequence_number":%d,"output_index":1,"item":{"id":"fc_bench","type":"function_call","status":"completed","arguments":"{}","call_id":"call_bench","name":"write_file"}}`, next()))
	add("response.completed", fmt.Sprintf(`{"type":"response.completed","sequence_number":%d,"response":{"id":"resp_bench","object":"response","status":"completed","model":"gpt-5.1","output":[],"usage":{"input_tokens":44,"input_tokens_details":{"cached_tokens":0},"output_tokens":200,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":244}}}`, next()))
	return names, frames
}

// BenchmarkOpenAIResponsesStreamDecode measures a Responses backend's
// stream decoded into IR events and encoded for an OpenAI Chat client.
func BenchmarkOpenAIResponsesStreamDecode(b *testing.B) {
	names, frames := respBenchStream()
	total := 0
	for _, f := range frames {
		total += len(f)
	}
	req := &Request{Model: "gpt-5.1", Stream: true, IncludeUsage: true}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	var evs []Event
	for b.Loop() {
		dec := openAIResponsesCodec{}.NewStreamDecoder()
		enc := openAIChatCodec{}.NewStreamEncoder(req)
		var w oaiDiscard
		for i, f := range frames {
			evs = dec.Decode(evs[:0], names[i], f)
			for j := range evs {
				enc.Encode(&w, &evs[j])
			}
		}
		evs = dec.End(evs[:0])
		if len(evs) != 0 || w.n == 0 {
			b.Fatalf("stream did not end cleanly: %d trailing events, %d bytes written", len(evs), w.n)
		}
	}
}

// BenchmarkOpenAIResponsesStreamEncode measures an OpenAI Chat backend's
// stream decoded and encoded as a Responses stream for a client like Codex.
// SetBytes counts the Responses bytes written.
func BenchmarkOpenAIResponsesStreamEncode(b *testing.B) {
	frames := oaiBenchStream()
	req := &Request{Model: "gpt-5.5", Stream: true}
	run := func() int {
		dec := openAIChatCodec{}.NewStreamDecoder()
		enc := openAIResponsesCodec{}.NewStreamEncoder(req)
		var w oaiDiscard
		var evs []Event
		for _, f := range frames {
			evs = dec.Decode(evs[:0], "", f)
			for i := range evs {
				enc.Encode(&w, &evs[i])
			}
		}
		return w.n
	}
	b.SetBytes(int64(run()))
	b.ReportAllocs()
	for b.Loop() {
		if run() == 0 {
			b.Fatal("nothing written")
		}
	}
}
