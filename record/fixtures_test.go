package record

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/sjson"

	"github.com/louter/louter/translate"
)

// The recordings of real agent runs (e2e/agent_record_test.go makes them
// with -update-recordings) replay through the current translators with no
// difference: a change to a codec or to the stream package that alters
// what an agent would get shows up here.

func fixtures(t *testing.T) map[string][]*Exchange {
	t.Helper()
	files, err := filepath.Glob("../testdata/recordings/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in testdata/recordings (%v)", err)
	}
	out := make(map[string][]*Exchange)
	for _, f := range files {
		xs, err := ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(xs) == 0 {
			t.Fatalf("%s holds no record", f)
		}
		out[filepath.Base(f)] = xs
	}
	return out
}

func TestFixturesReplay(t *testing.T) {
	for name, xs := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			for _, x := range xs {
				res := Replay(x, Options{})
				if res.Skipped != "" {
					t.Errorf("%s: skipped: %s", x.ID, res.Skipped)
				}
				for _, d := range res.Diffs {
					t.Errorf("%s: %s", x.ID, d)
				}
			}
		})
	}
}

// alteredCodec changes a translator: the client's stream encoder turns
// every text delta to upper case, the backend's request encoder adds a
// temperature.
type alteredCodec struct {
	translate.Codec
	client bool
}

func (c alteredCodec) NewStreamEncoder(req *translate.Request) translate.StreamEncoder {
	enc := c.Codec.NewStreamEncoder(req)
	if !c.client {
		return enc
	}
	return upperText{enc}
}

func (c alteredCodec) EncodeRequest(req *translate.Request) ([]byte, error) {
	b, err := c.Codec.EncodeRequest(req)
	if err != nil || c.client {
		return b, err
	}
	return sjson.SetBytes(b, "temperature", 0.25)
}

type upperText struct{ translate.StreamEncoder }

func (u upperText) Encode(w translate.FrameWriter, ev *translate.Event) {
	if ev.Type == translate.EventBlockDelta && ev.Block == translate.BlockText && ev.Text != "" {
		c := *ev
		c.Text = strings.ToUpper(c.Text)
		ev = &c
	}
	u.StreamEncoder.Encode(w, ev)
}

func TestReplayFindsChangedTranslator(t *testing.T) {
	altered := Options{Codec: func(p translate.Protocol, d *translate.Dialect) (translate.Codec, bool) {
		c, ok := defaultCodec(p, d)
		return alteredCodec{Codec: c, client: d == nil && p != translate.ProtocolOpenAIChat}, ok
	}}
	// The paths of a text delta in each client protocol's stream.
	textPath := map[string]string{
		"claude-code.jsonl": "$.delta.text",
		"codex.jsonl":       "$.delta",
		"gemini-cli.jsonl":  "$.candidates[0].content.parts[0].text",
	}
	for name, xs := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			var sawText, sawRequest bool
			for _, x := range xs {
				for _, d := range Replay(x, altered).Diffs {
					switch {
					case strings.HasPrefix(d.Part, "client_response.events[") && d.Path == textPath[name]:
						sawText = sawText || d.Got == strings.ToUpper(d.Got) && d.Want != d.Got
					case d.Part == "backend_request" && d.Path == "$.temperature" && d.Got == "0.25":
						sawRequest = true
					}
				}
			}
			if !sawText || !sawRequest {
				t.Errorf("the changed translators went unnoticed (text delta at %s: %v, backend request: %v)", textPath[name], sawText, sawRequest)
			}
		})
	}
}

func TestReplayFindsChangedRecording(t *testing.T) {
	xs := fixtures(t)["claude-code.jsonl"]
	x := xs[len(xs)-1]
	// A recorded client event that says something else than the replay.
	at := -1
	for i, e := range x.ClientResponse.Events {
		if e.Name == "content_block_delta" && strings.Contains(string(e.Data), `"text_delta"`) {
			at = i
			break
		}
	}
	if at < 0 {
		t.Fatal("the fixture has no text delta")
	}
	changed, err := sjson.SetBytes(x.ClientResponse.Events[at].Data, "delta.text", "not what louter sends")
	if err != nil {
		t.Fatal(err)
	}
	x.ClientResponse.Events[at].Data = changed
	res := Replay(x, Options{})
	if len(res.Diffs) != 1 {
		t.Fatalf("diffs %v, want one", res.Diffs)
	}
	d := res.Diffs[0]
	if want := "client_response.events[" + strconv.Itoa(at) + "]"; d.Part != want || d.Path != "$.delta.text" || d.Want != `"not what louter sends"` {
		t.Errorf("diff %s, want %s $.delta.text", d, want)
	}
}
