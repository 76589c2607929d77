package stream_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/louter/louter/internal/streamtest"
	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden/transcode")

// fixtureDirs hold upstream streams: in a folder named after a protocol,
// every .sse file is that protocol's; elsewhere the file name starts with
// "<protocol>_".
var fixtureDirs = []string{"captured", "anthropic", "openai_chat", "openai_responses", "gemini"}

type fixture struct {
	name     string
	protocol translate.Protocol
	body     []byte
}

func loadFixtures(t *testing.T) []fixture {
	t.Helper()
	protocols := translate.Protocols()
	// Longest name first, so "openai_chat_" wins over a shorter prefix.
	sort.Slice(protocols, func(i, j int) bool { return len(protocols[i]) > len(protocols[j]) })
	protocolOf := func(dir, base string) (translate.Protocol, bool) {
		if _, ok := translate.Lookup(translate.Protocol(dir)); ok {
			return translate.Protocol(dir), true
		}
		for _, p := range protocols {
			if strings.HasPrefix(base, string(p)+"_") {
				return p, true
			}
		}
		return "", false
	}
	var out []fixture
	for _, dir := range fixtureDirs {
		paths, _ := filepath.Glob(filepath.Join("..", "testdata", dir, "*.sse"))
		for _, p := range paths {
			base := filepath.Base(p)
			proto, ok := protocolOf(dir, base)
			if !ok {
				continue
			}
			body, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fixture{name: dir + "/" + base, protocol: proto, body: body})
		}
	}
	if len(out) == 0 {
		t.Fatal("no stream fixtures found")
	}
	return out
}

// transcode runs body through a fresh transcoder, chunk by chunk.
func transcode(t *testing.T, from, to translate.Protocol, chunks [][]byte) []byte {
	t.Helper()
	dec, _ := translate.Lookup(from)
	enc, _ := translate.Lookup(to)
	req := &translate.Request{Model: "client-model", Stream: true, IncludeUsage: true}
	tc := stream.NewTranscoder(&stream.SSEParser{}, dec.NewStreamDecoder(), enc.NewStreamEncoder(req), &stream.SSEOutput{})
	var out []byte
	for _, c := range chunks {
		out = append(out, tc.Write(c)...)
	}
	out = append(out, tc.Close()...)
	return streamtest.Normalize(out)
}

// TestTranscodeSplitAnywhere is the stream state machines' main guarantee:
// however the upstream body is cut into writes, the client receives the same
// bytes. Every fixture is cut in two at every byte; a streamtest.Memo shares
// the decoding and encoding across the cuts, so the test costs the framing
// of each cut, not a whole transcode per byte of fixture.
func TestTranscodeSplitAnywhere(t *testing.T) {
	for _, fx := range loadFixtures(t) {
		for _, to := range translate.ClientProtocols() {
			t.Run(fx.name+"->"+string(to), func(t *testing.T) {
				whole := transcode(t, fx.protocol, to, [][]byte{fx.body})
				if len(whole) == 0 {
					t.Fatal("no output")
				}
				memo, ref := streamtest.NewTranscodeMemo(streamtest.SSEFramer, streamtest.SSEOutput, newStreamDecoder(fx.protocol), newStreamEncoder(to), fx.body)
				if got := streamtest.Normalize(ref); !bytes.Equal(got, whole) {
					t.Fatalf("a decoder keeps a framed event's bytes past Decode: with them overwritten after the call the client gets\n%s\n--- instead of\n%s", got, whole)
				}
				out := streamtest.SSEOutput() // Write resets it
				for i := 0; i <= len(fx.body); i++ {
					got := memo.Run(streamtest.SSEFramer(), out, [][]byte{fx.body[:i], fx.body[i:]})
					// Replayed calls repeat the reference's generated ids;
					// only a run that went live needs normalizing.
					if !bytes.Equal(got, ref) && !bytes.Equal(streamtest.Normalize(got), whole) {
						t.Fatalf("split at byte %d differs:\n--- split\n%s\n--- whole\n%s", i, streamtest.Normalize(got), whole)
					}
				}
				for _, size := range []int{1, 2, 3, 7, 64, 512} {
					if got := transcode(t, fx.protocol, to, streamtest.Chunks(fx.body, size)); !bytes.Equal(got, whole) {
						t.Fatalf("chunks of %d bytes differ:\n--- chunked\n%s\n--- whole\n%s", size, got, whole)
					}
				}
				streamtest.Golden(t, filepath.Join("transcode", strings.TrimSuffix(strings.ReplaceAll(fx.name, "/", "_"), ".sse")+".to_"+string(to)+".sse"), whole, *update)
			})
		}
	}
}

// newStreamDecoder and newStreamEncoder return the codec factories a
// streamtest.Memo needs, with the request transcode uses.
func newStreamDecoder(p translate.Protocol) func() translate.StreamDecoder {
	c, _ := translate.Lookup(p)
	return c.NewStreamDecoder
}

func newStreamEncoder(p translate.Protocol) func() translate.StreamEncoder {
	c, _ := translate.Lookup(p)
	return func() translate.StreamEncoder {
		return c.NewStreamEncoder(&translate.Request{Model: "client-model", Stream: true, IncludeUsage: true})
	}
}

// TestTranscodeEndsProperly checks that every client stream ends the way its
// protocol ends a stream, whatever the upstream did: complete streams with
// their terminator, failed or cut ones with an error event.
func TestTranscodeEndsProperly(t *testing.T) {
	for _, fx := range loadFixtures(t) {
		for _, to := range translate.ClientProtocols() {
			out := transcode(t, fx.protocol, to, [][]byte{fx.body})
			var last string
			var p stream.SSEParser
			collect := func(name string, data []byte) { last = name + " " + string(data) }
			if err := p.Feed(out, collect); err != nil {
				t.Fatal(err)
			}
			_ = p.Close(collect)
			ok := false
			switch to {
			case translate.ProtocolAnthropic:
				ok = strings.HasPrefix(last, "message_stop ") || strings.HasPrefix(last, "error ")
			case translate.ProtocolOpenAIChat:
				ok = last == " [DONE]"
			case translate.ProtocolGemini:
				// No terminator: the last chunk carries a finishReason, or
				// the stream ends with an error.
				ok = strings.Contains(last, `"finishReason":"`) || strings.HasPrefix(last, ` {"error":`)
			case translate.ProtocolOpenAIResponses:
				ok = strings.HasPrefix(last, "response.completed ") || strings.HasPrefix(last, "response.incomplete ") || strings.HasPrefix(last, "response.failed ")
			default:
				ok = last != ""
			}
			if !ok {
				t.Errorf("%s -> %s: stream ends with %q", fx.name, to, last)
			}
		}
	}
}

// TestTranscodeCutAtEveryEvent truncates each fixture after every complete
// event and checks the client never gets a stream that looks complete
// without an error, unless the upstream had already finished.
func TestTranscodeCutAtEveryEvent(t *testing.T) {
	for _, fx := range loadFixtures(t) {
		events := bytes.SplitAfter(fx.body, []byte("\n\n"))
		for n := 1; n < len(events)-1; n++ {
			cut := bytes.Join(events[:n], nil)
			for _, to := range translate.ClientProtocols() {
				out := transcode(t, fx.protocol, to, [][]byte{cut})
				if !bytes.Contains(out, []byte("error")) && !finishedUpstream(fx.protocol, cut) {
					t.Errorf("%s cut after %d events -> %s: no error in %s", fx.name, n, to, out)
				}
			}
		}
	}
}

// finishedUpstream reports whether the upstream had already said the
// response was complete (then a cut only loses the terminator).
func finishedUpstream(p translate.Protocol, b []byte) bool {
	switch p {
	case translate.ProtocolAnthropic:
		return bytes.Contains(b, []byte(`"stop_reason":"`))
	case translate.ProtocolOpenAIChat:
		return bytes.Contains(b, []byte(`"finish_reason":"`))
	case translate.ProtocolGemini:
		return bytes.Contains(b, []byte(`"finishReason"`)) || bytes.Contains(b, []byte(`"blockReason"`))
	case translate.ProtocolOpenAIResponses:
		return bytes.Contains(b, []byte(`"type":"response.completed"`)) || bytes.Contains(b, []byte(`"type":"response.incomplete"`))
	}
	return false
}
