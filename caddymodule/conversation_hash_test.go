package caddymodule

import (
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// The conversation hash walks the raw bytes the body scan located instead
// of gjson Results; the key must stay what it was, or every conversation
// would move to another upstream when louter is upgraded. gjsonFirstTurnHash
// is the former implementation, kept as the reference.

// firstTurnHashCases are bodies whose text is awkward to walk: escapes of
// every kind, surrogate pairs and lone surrogates, escaped member names,
// deep nesting, messages that are an object or a string.
var firstTurnHashCases = []struct {
	p    translate.Protocol
	body string
}{
	{translate.ProtocolAnthropic, `{"system":"be \"brief\"\n\t\/\\\b\f\r","messages":[{"role":"user","content":"hi"}]}`},
	{translate.ProtocolAnthropic, `{"system":[{"type":"text","text":"a\u00e9\u4e2d\ud83d\ude00b","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`},
	{translate.ProtocolAnthropic, `{"system":"lone \ud83d here \udc00 and \ud83d\u0041","messages":[{"role":"user","content":"hi"}]}`},
	{translate.ProtocolAnthropic, `{"system":"nul \u0000 inside","messages":[{"role":"user","content":[{"type":"text","t\u0065xt":"escaped name"},{"type":"image","source":{"data":"no text here"}}]}]}`},
	{translate.ProtocolAnthropic, `{"messages":[{"role":"user","content":[[[[[[[[[["deep"]]]]]]]]],[[[[[[["shallow"]]]]]]]]}]}`},
	{translate.ProtocolAnthropic, `{"messages" : [ { "role" : "user" , "content" : [ 1 , true , null , -2.5e3 , "after literals" ] } , {"role":"assistant","content":"no"} ] }`},
	{translate.ProtocolOpenAIChat, `{"messages":[{"role":"system","content":"s1"},{"role":"developer","content":[{"type":"text","text":"s2"}]},{"role":"user","content":"u"},{"role":"assistant","content":"a"}]}`},
	{translate.ProtocolOpenAIChat, `{"messages":[{"content":"no role"},{"role":"user","content":"second"}]}`},
	{translate.ProtocolOpenAIChat, `{"messages":["a bare string",{"role":"user","content":"x"}]}`},
	{translate.ProtocolOpenAIResponses, `{"instructions":"sys","input":"just \"one\" string"}`},
	{translate.ProtocolOpenAIResponses, `{"input":[{"role":"developer","content":"d"},{"type":"message","role":"user","content":[{"type":"input_text","text":"t"}]}]}`},
	{translate.ProtocolGemini, `{"systemInstruction":{"parts":[{"text":"gem sys"}]},"contents":[{"role":"user","parts":[{"text":"q"},{"inlineData":{"data":"x"}}]},{"role":"model","parts":[{"text":"a"}]}]}`},
	{translate.ProtocolAnthropic, `{"messages":[]}`},
	{translate.ProtocolAnthropic, "{\"system\":\"a\\n\x01b\",\"messages\":[]}"}, // invalid: the scan refuses it
}

func TestFirstTurnHashMatchesGjson(t *testing.T) {
	check := func(t *testing.T, p translate.Protocol, body []byte) {
		t.Helper()
		top, err := translate.ScanTopLevel(p, body)
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		got := firstTurnHash(body, top.SystemAt, top.MessagesAt)
		want := gjsonFirstTurnHash(body, top.SystemAt, top.MessagesAt)
		if got != want {
			t.Fatalf("firstTurnHash = %q, gjson walk = %q", got, want)
		}
	}
	for _, c := range firstTurnHashCases {
		if _, err := translate.ScanTopLevel(c.p, []byte(c.body)); err != nil {
			continue // a fuzz seed only
		}
		t.Run(c.body, func(t *testing.T) { check(t, c.p, []byte(c.body)) })
	}
	dirs := map[string]translate.Protocol{"anthropic": translate.ProtocolAnthropic, "openai_chat": translate.ProtocolOpenAIChat,
		"openai_responses": translate.ProtocolOpenAIResponses, "gemini": translate.ProtocolGemini}
	n := 0
	for dir, p := range dirs {
		files, _ := filepath.Glob(filepath.Join("..", "testdata", dir, "request_*.json"))
		for _, f := range files {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			t.Run(f, func(t *testing.T) { check(t, p, body) })
			n++
		}
	}
	body := claudeCodeTurnOpenAI(t)
	t.Run("claude code turn, openai chat", func(t *testing.T) { check(t, translate.ProtocolOpenAIChat, body) })
	if n < 4 {
		t.Fatalf("only %d request files found", n)
	}
}

// FuzzFirstTurnHash compares the walk with the gjson reference on any body
// the scan accepts.
func FuzzFirstTurnHash(f *testing.F) {
	for _, c := range firstTurnHashCases {
		f.Add(uint8(0), c.body)
	}
	protocols := []translate.Protocol{translate.ProtocolAnthropic, translate.ProtocolOpenAIChat, translate.ProtocolOpenAIResponses, translate.ProtocolGemini}
	f.Fuzz(func(t *testing.T, pi uint8, body string) {
		p := protocols[int(pi)%len(protocols)]
		top, err := translate.ScanTopLevel(p, []byte(body))
		if err != nil {
			return
		}
		b := []byte(body)
		if got, want := firstTurnHash(b, top.SystemAt, top.MessagesAt), gjsonFirstTurnHash(b, top.SystemAt, top.MessagesAt); got != want {
			t.Fatalf("firstTurnHash = %q, gjson walk = %q", got, want)
		}
	})
}

// The hash allocates only its key: it no longer unescapes the system
// prompt into a copy.
func TestFirstTurnHashAllocs(t *testing.T) {
	body := claudeCodeTurnOpenAI(t)
	top, err := translate.ScanTopLevel(translate.ProtocolOpenAIChat, body)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(20, func() { firstTurnHash(body, top.SystemAt, top.MessagesAt) }); n > 1 {
		t.Fatalf("firstTurnHash: %v allocations, want 1, the key", n)
	}
}

func gjsonFirstTurnHash(body []byte, sys, msgs translate.Span) string {
	member := func(at translate.Span) gjson.Result {
		if !at.Found() {
			return gjson.Result{}
		}
		return gjson.Parse(unsafe.String(&body[at.Start], at.End-at.Start)) // read only; nothing of it is kept
	}
	h := xxhash.New()
	n := gjsonHashText(h, member(sys))
	ms := member(msgs)
	if ms.Type == gjson.String { // Responses: input may be one string
		n += gjsonHashText(h, ms)
	} else {
		ms.ForEach(func(_, m gjson.Result) bool {
			n += gjsonHashText(h, m)
			return isSystemMessage(m) // the first other message ends the first turn
		})
	}
	if n == 0 {
		return ""
	}
	var sum [8]byte
	binary.BigEndian.PutUint64(sum[:], h.Sum64())
	return "hash:" + hex.EncodeToString(sum[:])
}

func gjsonHashText(h *xxhash.Digest, v gjson.Result) int {
	n := 0
	var walk func(v gjson.Result, depth int)
	walk = func(v gjson.Result, depth int) {
		if depth > 8 {
			return // messages are shallow; bound the walk
		}
		switch {
		case v.Type == gjson.String:
			_, _ = h.WriteString(v.Str)
			_, _ = h.Write(textSeparator[:])
			n++
		case v.IsArray():
			v.ForEach(func(_, e gjson.Result) bool { walk(e, depth+1); return true })
		case v.IsObject():
			v.ForEach(func(k, e gjson.Result) bool {
				switch k.Str {
				case "text", "content", "parts":
					walk(e, depth+1)
				}
				return true
			})
		}
	}
	walk(v, 0)
	return n
}

// BenchmarkFirstTurnHash is the hash of the ~100 KB Claude Code turn in
// its OpenAI Chat form (what the passthrough benchmark hashes when the
// request is released), by the walk and by the gjson reference, so one
// run compares them.
func BenchmarkFirstTurnHash(b *testing.B) {
	body := claudeCodeTurnOpenAI(b)
	top, err := translate.ScanTopLevel(translate.ProtocolOpenAIChat, body)
	if err != nil {
		b.Fatal(err)
	}
	for _, impl := range []struct {
		name string
		hash func([]byte, translate.Span, translate.Span) string
	}{{"walk", firstTurnHash}, {"gjson", gjsonFirstTurnHash}} {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				impl.hash(body, top.SystemAt, top.MessagesAt)
			}
		})
	}
}

// TestStringEnd checks the word-at-a-time string end against a byte loop,
// with the closing quote, escapes and an unclosed end at every offset
// around the eight-byte words it reads.
func TestStringEnd(t *testing.T) {
	ref := func(s string, i int) (int, bool) {
		esc := false
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '"':
				return j + 1, esc
			case '\\':
				esc = true
				j++
			}
		}
		return len(s), esc
	}
	var cases []string
	for n := 0; n < 20; n++ {
		pad := strings.Repeat("é", n/2) + strings.Repeat("a", n%2)
		cases = append(cases,
			`"`+pad+`"`, `"`+pad+`"tail, "more"`, `"`+pad, `"`+pad+`\`,
			`"`+pad+`\"`+pad+`" ,`, `"`+pad+`\\"x`, `"\\`+pad+`\n"`, `"`+pad+"\x00\x7f\xff\"",
		)
	}
	for _, s := range cases {
		for _, lead := range []string{"", "[", "12345678"} {
			in := lead + s
			end, esc := stringEnd(in, len(lead))
			wantEnd, wantEsc := ref(in, len(lead))
			if end != wantEnd || esc != wantEsc {
				t.Errorf("stringEnd(%q, %d) = %d, %v; want %d, %v", in, len(lead), end, esc, wantEnd, wantEsc)
			}
		}
	}
}
