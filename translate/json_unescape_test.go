package translate

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// jsonStringStarts returns the index after the opening quote of every
// string in the valid JSON document data, keys included.
func jsonStringStarts(tb testing.TB, data []byte) []int {
	tb.Helper()
	var starts []int
	for i := 0; i < len(data); i++ {
		if data[i] != '"' {
			continue
		}
		end, _, _, ok := jsonScanString(data, i+1)
		if !ok {
			tb.Fatalf("string at %d does not end", i)
		}
		starts = append(starts, i+1)
		i = end
	}
	return starts
}

// escapeDense returns random string contents made of escapes of every
// kind — one-letter, \u of ASCII, of two- and three-byte characters,
// surrogates paired, lone, reversed and followed by a non-surrogate —
// plain bytes, raw UTF-8, and, unless valid, invalid escapes and control
// characters.
func escapeDense(rng *rand.Rand, valid bool) []byte {
	pieces := []string{
		`\n`, `\"`, `\\`, `\t`, `\/`, `\b`, `\f`, `\r`, `\u0041`, `\u00e9`, `\u4E2D`, `\u0000`,
		`\ud83d\ude00`, `\ud800`, `\udc00`, `\udc00\ud800`, `\ud800\u0041`, `\ud800\ud800`, `\uDBFF\uDFFF`,
		"a", "bc", "func main() {", "    ", "é", "日本", "\xff", "0123456789abcdef",
	}
	if !valid {
		pieces = append(pieces, `\x`, `\u12`, `\uZZZZ`, `\ud800\u`, `\ud800\uz000`, "\x01", "\x1f", `\`)
	}
	var b []byte
	for range rng.IntN(60) {
		b = append(b, pieces[rng.IntN(len(pieces))]...)
	}
	return b
}

// TestJSONScanUnescapeAsReference holds jsonScanUnescape to its former
// implementation (json_unescape_ref_test.go): the same result, flags and
// text for the strings of the Claude Code request and escape-dense random
// strings, at every alignment, truncated at every position, with text
// already in dst and with no room to spare in it.
func TestJSONScanUnescapeAsReference(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "testdata", "bench", "claude_code_100k.json"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(data []byte, i int, dst []byte) {
		t.Helper()
		prefix := string(dst)
		want, wantDst, wantOK := refJSONScanUnescape(data, i, []byte(prefix))
		got, gotDst, gotOK := jsonScanUnescape(data, i, dst)
		if got != want || gotOK != wantOK {
			t.Fatalf("%.120q from %d: %+v %v, reference %+v %v", data, i, got, gotOK, want, wantOK)
		}
		if gotOK && !bytes.Equal(gotDst, wantDst) {
			t.Fatalf("%.120q from %d: text %.120q, reference %.120q", data, i, gotDst, wantDst)
		}
	}
	for _, i := range jsonStringStarts(t, body) {
		check(body, i, nil)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 1500 {
		contents := escapeDense(rng, n%3 != 0)
		pad := bytes.Repeat([]byte{'x'}, n%8) // every alignment of the words read
		data := append(append(append(pad, '"'), contents...), `" , "tail é"`...)
		for end := len(pad) + 1; end <= len(data); end++ {
			check(data[:end], len(pad)+1, nil)
		}
		check(data, len(pad)+1, []byte("kept"))                      // appended after what dst holds
		check(data, len(pad)+1, make([]byte, 0, 2*len(data)))        // room enough
		check(data, len(pad)+1, append(make([]byte, 0, 5), "ab"...)) // grown on the way
	}
}

// BenchmarkJSONScanUnescape unescapes every string of the Claude Code
// request that has escapes: code and prose with an escape every ~40 bytes.
func BenchmarkJSONScanUnescape(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("..", "testdata", "bench", "claude_code_100k.json"))
	if err != nil {
		b.Fatal(err)
	}
	var starts []int
	size := 0
	for _, i := range jsonStringStarts(b, body) {
		if end, esc, _, _ := jsonScanString(body, i); esc {
			starts = append(starts, i)
			size += end - i
		}
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var dst []byte
	for b.Loop() {
		for _, i := range starts {
			_, dst, _ = jsonScanUnescape(body, i, dst[:0])
		}
	}
}
