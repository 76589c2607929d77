package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// marshalStd is the line encoding/json writes for x.
func marshalStd(t *testing.T, x *Exchange) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// appendJSON writes what encoding/json would, byte for byte.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	x := &Exchange{
		Version: Version, Time: time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC), ID: "id\"1",
		Client:   Endpoint{Protocol: "anthropic", Path: "/v1/messages"},
		Backend:  &Backend{Name: "b<&>", Protocol: "openai_chat", MaxTokens: 5},
		Stream:   true,
		Attempts: 2,
		ClientRequest: &Request{Method: "POST", Path: "/p", Query: "a=1&b=<2>", Header: map[string][]string{"B": {"2"}, "A": {"1", "x\u2028y"}},
			Body: json.RawMessage("{\"a\": [1, 2],\n \"b\":\"<\\u00e9>\"}")},
		BackendRequest: &Request{BodyText: "not json\x01\tbad \xff utf8 \u2029"},
		BackendResponse: &Response{Status: 200, Events: []Event{
			{T: 1, Name: "message_start", Data: json.RawMessage(`{"x":1}`)},
			{T: 2, Text: "[DONE]"},
			{T: 3},
		}, EventsDropped: 4},
		ClientResponse: &Response{Status: 502, BodyText: "oops", BodyDropped: 9},
		Dropped:        []string{"top_k"},
		Error:          "the client went away",
		Truncated:      true,
	}
	if got, want := x.appendJSON(nil), marshalStd(t, x); !bytes.Equal(got, want) {
		t.Errorf("appendJSON:\n%s\nencoding/json:\n%s", got, want)
	}
	// Captured data (raw) is written as it would be once moved to the
	// exported fields.
	c := NewCapture(x.Time, "cap", x.Client, 0, nil)
	c.ClientRequest("POST", "/p", "", nil, []byte("{\"a\":\n1}"))
	c.ClientHeader(200, map[string][]string{"Content-Type": {"text/event-stream"}})
	c.ClientWrite([]byte("data: {\"k\":\ndata: 2}\n\ndata: [DONE]\n\n"))
	line := c.Finish(true, nil, "").appendJSON(nil)
	back, err := Read(bytes.NewReader(line))
	if err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if got := back[0]; string(got.ClientRequest.Body) != `{"a":1}` || string(got.ClientResponse.Events[0].Data) != `{"k":2}` || got.ClientResponse.Events[1].Text != "[DONE]" {
		t.Errorf("read back %s", line)
	}
}

// Every fixture line, read and written again, is the same bytes.
func TestAppendJSONRewritesFixtures(t *testing.T) {
	files, _ := filepath.Glob("../testdata/recordings/*.jsonl")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, maxLine)
		for sc.Scan() {
			var x Exchange
			if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
				t.Fatal(err)
			}
			if got := x.appendJSON(nil); !bytes.Equal(got, sc.Bytes()) {
				t.Errorf("%s %s: written differently", filepath.Base(f), x.ID)
			}
		}
	}
}

// The strings of a record are written as encoding/json writes them, the
// escapes it shortens (\b and \f since Go 1.22) and invalid UTF-8 included.
func TestAppendJSONStringsMatchEncodingJSON(t *testing.T) {
	for _, s := range []string{"\b\f\x00\x1f\x7f", "bad \xff \xed\xa0\x80 utf8", "\u2028\u2029 <&> é 😀", "\ufffd"} {
		x := &Exchange{Version: Version, ID: s, Client: Endpoint{Path: s}, Error: s,
			BackendRequest:  &Request{Method: s, BodyText: s},
			BackendResponse: &Response{Status: 200, Events: []Event{{T: 1, Name: s, Text: s}}}}
		if got, want := x.appendJSON(nil), marshalStd(t, x); !bytes.Equal(got, want) {
			t.Errorf("%q:\nappendJSON:    %s\nencoding/json: %s", s, got, want)
		}
	}
}
