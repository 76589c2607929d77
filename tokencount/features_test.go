package tokencount

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/louter/louter/translate"
)

// TestFeaturesByRun checks that features, which reads ASCII a run at a
// time, counts exactly what the byte-by-byte definition below counts, on
// the corpus texts, on edge cases and on random mixes of every class.
func TestFeaturesByRun(t *testing.T) {
	texts := []string{
		"", "a", "A", "1", " ", "\n", "!", "é", "日",
		"HelloWorld", "HTTPServer", "abcdefghijkl", "ABCDEFGHIJ", "Abcdefghij",
		"1234567", "12 345 6789012", "a  b   c\t\td", "x\r\n\r\ny", "==>!!", "éabcdefgh", "Éclair café",
		"naïveAPIKey9999", "日本語のテキストabc", "🙂🙂 ok", "\x00\x01\x7f",
	}
	texts = append(texts, corpusTexts(loadCorpus(t))...)
	alphabet := []string{"a", "b", "Z", "Q", "0", "7", " ", "\t", "\n", "\r", ".", "{", "é", "ж", "日", "🙂", "\xff"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for _, s := range texts {
		if got, want := features(s), featuresByByteAfter(cNone, s); got != want {
			t.Fatalf("features(%.80q) = %v, byte by byte %v", s, got, want)
		}
	}
}

// featuresByByteAfter is the definition of features, a byte at a time,
// of s following a character of class prev (a sample's window).
func featuresByByteAfter(prev class, s string) [nFeatures]float64 {
	var c [nFeatures]int
	run := 0 // length of the current run of the same kind
	for i := 0; i < len(s); {
		b := s[i]
		if b >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			i += n
			switch {
			case isWide(r):
				c[fWide]++
				prev = cNonASCII
			case unicode.IsLetter(r) || unicode.IsMark(r):
				// Accented Latin, Cyrillic, Greek, Arabic, Indic: words
				// like English ones, cut finer.
				c[fOther]++
				if prev != cLower && prev != cUpper {
					c[fWords]++
					run = 0
				}
				run++
				prev = cLower
			default: // emoji and symbols: a few byte-level tokens each
				c[fPunct] += n
				if prev != cPunct {
					c[fPunctRun]++
				}
				prev = cPunct
			}
			continue
		}
		i++
		k := byteClass[b]
		switch k {
		case cLower:
			if prev != cLower && prev != cUpper {
				c[fWords]++
				run = 0
			}
			run++
			if run > 6 {
				c[fLongLetter]++
			}
		case cUpper:
			if prev != cUpper {
				c[fWords]++
				run = 0
			}
			run++
			if run > 6 {
				c[fLongLetter]++
			}
		case cDigit:
			if prev != cDigit {
				run = 0
			}
			if run%3 == 0 {
				c[fDigitGroup]++
			}
			run++
		case cPunct:
			c[fPunct]++
			if prev != cPunct {
				c[fPunctRun]++
			}
		case cSpace:
			if prev != cSpace {
				run = 0
			}
			run++
			if run == 2 {
				c[fSpaceRun]++
			}
		case cNewline:
			c[fNewline]++
		}
		prev = k
	}
	var f [nFeatures]float64
	for i, v := range c {
		f[i] = float64(v)
	}
	return f
}

// diffTexts are the texts the differential tests read: the counting
// corpus, the Claude Code request of the load benchmark, edge cases, and
// random mixes of every class (invalid UTF-8, wide characters, digit,
// space and punctuation runs, case changes) long enough to be sampled.
func diffTexts(t *testing.T) []string {
	t.Helper()
	texts := []string{
		"", "a", "A", "1", " ", "\n", "!", "é", "日", "\xff", "\xe6\x97", "é\xffa",
		"HelloWorld", "HTTPServer", "abcdefghijkl", "ABCDEFGHIJabc", "1234567", "a  b   c\t\td",
		"x\r\n\r\ny", "==>!!", "éabcdefgh", "naïveAPIKey9999", "日本語のテキストabc", "🙂🙂 ok", "\x00\x01\x7f",
		"ÀÉÎabcdefgh", "ДжонSmith", "abc\u0301def", "12日34", " \u3000 ",
	}
	texts = append(texts, corpusTexts(loadCorpus(t))...)
	body, err := os.ReadFile("../testdata/bench/claude_code_100k.json")
	if err != nil {
		t.Fatal(err)
	}
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	req, err := anth.DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	walk(req, OpenAI, counter{text: func(s string) int {
		texts = append(texts, s)
		return 0
	}})
	alphabet := []string{"a", "bc", "Z", "QR", "0", "789", " ", "  ", "\t", "\n", "\r", ".", "{}", "é", "ж", "日", "한", "🙂", "\u0301", "\xff", "\xe6\x97", "\x80"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1500 {
		var b strings.Builder
		for range rng.IntN(300) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	return texts
}

// TestFeaturesAsReference holds the estimator to its definition
// (featuresByByteAfter) and its former sampling (estimate_ref_test.go):
// the same features after every
// class, at every start of every text (a window that begins mid-word, or
// in the middle of a character), and the same sampled token counts.
func TestFeaturesAsReference(t *testing.T) {
	for _, s := range diffTexts(t) {
		if got, want := sampledEstimate(s), refSampledEstimate(s); got != want {
			t.Fatalf("sampledEstimate(%.80q) = %d, reference %d", s, got, want)
		}
		if got, want := EstimateText(s), refTokensOf(featuresByByteAfter(cNone, s), 1); got != want {
			t.Fatalf("EstimateText(%.80q) = %d, reference %d", s, got, want)
		}
		// Windows of up to 48 bytes from every start of the first 128
		// bytes and from starts further on, after every class, and the
		// class of what precedes them.
		for a := 0; a < len(s); a += 1 + a/128*29 {
			b := min(len(s), a+1+a%48)
			w := s[a:b]
			if got, want := classBefore(s[:a]), refClassBefore(s[:a]); got != want {
				t.Fatalf("classBefore(%.80q) = %d, reference %d", s[:a], got, want)
			}
			prevs := []class{cNone, cLower, cUpper, cDigit, cPunct, cSpace, cNewline, cNonASCII}
			if a >= 32 { // every class for the first starts only
				prevs = []class{cNone, classBefore(s[:a])}
			}
			for _, prev := range prevs {
				var c counts
				c.add(prev, w)
				var f [nFeatures]float64
				for i, v := range c {
					f[i] = float64(v)
				}
				if want := featuresByByteAfter(prev, w); f != want {
					t.Fatalf("features after class %d of %.80q = %v, reference %v", prev, w, f, want)
				}
			}
		}
	}
}

// TestQuickAsReference checks whole requests: Quick and Estimate of the
// corpus and the Claude Code request, through every framing, as the
// reference counts them.
func TestQuickAsReference(t *testing.T) {
	files := loadCorpus(t)
	body, err := os.ReadFile("../testdata/bench/claude_code_100k.json")
	if err != nil {
		t.Fatal(err)
	}
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	req, err := anth.DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, corpusFile{name: "claude_code_100k.json", req: req})
	for _, f := range files {
		for _, fr := range []*Framing{OpenAI, Anthropic, Gemini} {
			if got, want := Quick(f.req, fr), walk(f.req, fr, counter{text: refSampledEstimate}); got != want {
				t.Errorf("%s: Quick = %d, reference %d", f.name, got, want)
			}
			ref := func(s string) int { return refTokensOf(featuresByByteAfter(cNone, s), 1) }
			if got, want := Estimate(f.req, fr), walk(f.req, fr, counter{text: ref}); got != want {
				t.Errorf("%s: Estimate = %d, reference %d", f.name, got, want)
			}
		}
	}
}
