package stream_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// clientRequest is a streaming request as Claude Code sends it.
var clientRequest = []byte(`{"model":"claude-sonnet-4-5","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"Hi"}]}`)

// upstreamChunks is an OpenAI Chat backend's streamed answer, cut where the
// network happened to cut it.
var upstreamChunks = [][]byte{
	[]byte("data: {\"id\":\"c1\",\"model\":\"gpt-5.5\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n\ndata: {\"id\":\"c1\",\"mo"),
	[]byte("del\":\"gpt-5.5\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo!\"}}]}\n\n"),
	[]byte("data: {\"id\":\"c1\",\"model\":\"gpt-5.5\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"),
}

// Claude Code's request translated for an OpenAI Chat backend, and the
// backend's stream transcoded for Claude Code as it arrives. (The README
// shows the same as a whole program, which internal/readme builds and
// runs.)
func ExampleTranscoder() {
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	oai, _ := translate.Lookup(translate.ProtocolOpenAIChat)
	req, err := anth.DecodeRequest(clientRequest) // the client's request
	if err != nil {
		fmt.Println(err) // a *translate.Error; anth.EncodeError writes it for the client
		return
	}
	backendBody, err := oai.EncodeRequest(req) // the same request for an OpenAI backend
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(backendBody))

	tc := stream.NewTranscoder(&stream.SSEParser{}, oai.NewStreamDecoder(),
		anth.NewStreamEncoder(req), &stream.SSEOutput{})
	var client []byte
	for _, chunk := range upstreamChunks { // as the backend's body arrives
		client = append(client, tc.Write(chunk)...) // write and flush these bytes
	}
	client = append(client, tc.Close()...)

	// What the client receives, event by event (ids and usage left out).
	var p stream.SSEParser
	show := func(name string, data []byte) {
		var ev struct {
			Delta struct {
				Text       string `json:"text"`
				StopReason string `json:"stop_reason"`
			} `json:"delta"`
		}
		_ = json.Unmarshal(data, &ev)
		fmt.Println(strings.TrimSpace(name + " " + ev.Delta.Text + ev.Delta.StopReason))
	}
	_ = p.Feed(client, show)
	_ = p.Close(show)
	// Output:
	// {"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"Hi"}],"max_completion_tokens":100,"stream":true,"stream_options":{"include_usage":true}}
	// message_start
	// content_block_start
	// content_block_delta Hel
	// content_block_delta lo!
	// content_block_stop
	// message_delta end_turn
	// message_stop
}
