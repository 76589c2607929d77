package tokencount

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
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
		if got, want := features(s), featuresByByte(s); got != want {
			t.Fatalf("features(%.80q) = %v, byte by byte %v", s, got, want)
		}
	}
}

// featuresByByte is the definition of features, a byte at a time.
func featuresByByte(s string) [nFeatures]float64 {
	var c [nFeatures]int
	prev := cNone
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
		k := asciiClass[b]
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
