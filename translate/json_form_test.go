package translate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jsonFormFixture decodes the string contents esc as a decoder does: the
// text, and its form.
func jsonFormFixture(esc string) (string, jsonForm) {
	raw := []byte(esc)
	s := esc
	if strings.IndexByte(esc, '\\') >= 0 {
		s = string(jsonUnescape(nil, raw))
	}
	return s, newJSONForm(s, raw)
}

func TestJSONFormSplice(t *testing.T) {
	tests := []struct {
		name   string
		esc    string // string contents as a client wrote them
		splice bool   // the form is used
	}{
		{"plain ascii", "You are Claude Code, Anthropic's official CLI.", true},
		{"long ascii", strings.Repeat("read the <file> & edit it; ", 40), true},
		{"escapes", `line 1\n\tline \"2\"\\ \/ \b\f\r`, true},
		{"unicode escapes", `caf\u00e9 \u20ac \u0000 \u001f`, true},
		{"raw utf-8", "café → 日本語 🚀", true},
		{"surrogate pair escape", `smile \ud83d\ude00 done`, true},
		{"escaped line separator", `a\u2028b`, true},
		{"raw line separator", "a\u2028b", false},
		{"raw paragraph separator", "a\u2029b", false},
		{"lone high surrogate", `x\ud83dy`, false},
		{"high surrogate then non-surrogate escape", `x\ud83d\u0041`, false},
		{"lone low surrogate", `x\ude00`, false},
		{"high surrogate at the end", `x\ud83d`, false},
		{"invalid utf-8", "ab\xffcd", false},
		{"truncated utf-8", "abcdefgh\xe2\x82", false},
		{"invalid utf-8 after escape", `\n` + "\xc3\x28", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, f := jsonFormFixture(tt.esc)
			if got := f.use(s); got != tt.splice {
				t.Fatalf("form used = %v, want %v", got, tt.splice)
			}
			out := appendJSONText(nil, s, f)
			ref := appendJSONString(nil, s)
			if tt.splice && !bytes.Equal(out, []byte(`"`+tt.esc+`"`)) {
				t.Errorf("spliced %s, want the input verbatim", out)
			}
			if !tt.splice && !bytes.Equal(out, ref) {
				t.Errorf("fallback %s, want %s", out, ref)
			}
			if !strings.Contains(tt.esc, `\`) && !bytes.Equal(out, ref) {
				t.Errorf("without escapes the splice must equal the escape path:\n%s\n%s", out, ref)
			}
			var a, b string
			if err := json.Unmarshal(out, &a); err != nil {
				t.Fatalf("spliced output %s: %v", out, err)
			}
			if err := json.Unmarshal(ref, &b); err != nil {
				t.Fatal(err)
			}
			if a != b {
				t.Errorf("spliced reads %q, escape path %q", a, b)
			}
			// Joined into a literal, the contents behave alike.
			joined := appendJSONTextContents([]byte(`"<`), s, f)
			joined = append(joined, `>"`...)
			if err := json.Unmarshal(joined, &a); err != nil || a != "<"+b+">" {
				t.Errorf("joined %s reads %q (%v), want %q", joined, a, err, "<"+b+">")
			}
		})
	}
}

func TestJSONFormStale(t *testing.T) {
	// The form differs from what the escape path writes, so the output
	// tells which one was used.
	s, f := jsonFormFixture(`say \u0022hi\u0022`)
	p := Part{Type: PartText, Text: s, textForm: f}
	tests := []struct {
		name string
		text string
		want string
	}{
		{"unchanged", p.Text, `"say \u0022hi\u0022"`},
		{"reassigned", "something else\n", `"something else\n"`},
		{"same text, another string", strings.Clone(s), `"say \u0022hi\u0022"`},
		{"prefix of the text", s[:3], `"say"`},
		{"emptied", "", `""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := p // a copy carries the form
			q.Text = tt.text
			if got := appendJSONText(nil, q.Text, q.textForm); string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if got := appendJSONTextContents(nil, q.Text, q.textForm); `"`+string(got)+`"` != tt.want {
				t.Errorf("contents %s, want %s", got, tt.want)
			}
		})
	}
	if (jsonForm{}).use("") {
		t.Error("the zero form is used for the empty string")
	}
}

// jsonFormStrip clears every splice form of req, so that encoding it takes
// the escape path everywhere.
func jsonFormStrip(req *Request) {
	var parts func(ps []Part)
	parts = func(ps []Part) {
		for i := range ps {
			ps[i].textForm = jsonForm{}
			if tr := ps[i].ToolResult; tr != nil {
				parts(tr.Content)
			}
		}
	}
	parts(req.System)
	for i := range req.Messages {
		parts(req.Messages[i].Parts)
	}
	for i := range req.Tools {
		req.Tools[i].descForm = jsonForm{}
	}
}

// TestJSONFormOpenAIChatRequest encodes Claude Code requests for an OpenAI
// Chat backend with and without splicing: the bodies are the same bytes
// (Claude Code escapes as appendJSONString does), the size hint holds the
// spliced body, and a text rewritten after decoding is escaped anew.
func TestJSONFormOpenAIChatRequest(t *testing.T) {
	big, err := os.ReadFile(filepath.Join("..", "testdata", "bench", "claude_code_100k.json"))
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{
		"request_claude_code.json": anthFixture(t, "request_claude_code.json"),
		"request_features.json":    anthFixture(t, "request_features.json"),
		"claude_code_100k.json":    big,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			req, err := anthropicCodec{}.DecodeRequest(body)
			if err != nil {
				t.Fatal(err)
			}
			spliced, err := openAIChatCodec{}.EncodeRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			if hint := oaiRequestSizeHint(req); hint < len(spliced) {
				t.Errorf("size hint %d < body %d", hint, len(spliced))
			}
			jsonFormStrip(req)
			req.Dropped = nil
			escaped, err := openAIChatCodec{}.EncodeRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(spliced, escaped) {
				t.Errorf("spliced body differs from the escaped one:\n%s\n%s", spliced, escaped)
			}
		})
	}
	t.Run("rewritten text", func(t *testing.T) {
		req, err := anthropicCodec{}.DecodeRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"caf\u00e9"}],"tools":[{"name":"t","description":"d\u00e9"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := openAIChatCodec{}.EncodeRequest(req)
		if !bytes.Contains(out, []byte(`"caf\u00e9"`)) || !bytes.Contains(out, []byte(`"d\u00e9"`)) {
			t.Fatalf("the client's escapes were not spliced: %s", out)
		}
		req.Messages[0].Parts[0].Text = "tea"
		req.Tools[0].Description = "other"
		out, _ = openAIChatCodec{}.EncodeRequest(req)
		if !bytes.Contains(out, []byte(`"content":"tea"`)) || !bytes.Contains(out, []byte(`"description":"other"`)) {
			t.Fatalf("a rewritten text used its stale form: %s", out)
		}
	})
}
