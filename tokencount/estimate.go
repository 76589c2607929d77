package tokencount

import (
	"unicode"
	"unicode/utf8"
)

// EstimateText approximates the o200k_base token count of s without a
// tokenizer. BPE vocabularies learnt on web text and code cut text where
// the character class changes: a lower-case run, with the capital before it,
// is mostly one token (longer words more); digits go in groups of up to
// three; punctuation runs merge by twos or threes; indentation is a token
// per run; other scripts cost per character. EstimateText counts those
// features in one pass and weighs them with factors fitted on the corpus in
// testdata/tokencount (see TestCalibrate). It does not allocate.
func EstimateText(s string) int {
	f := features(s)
	var t float64
	for i, w := range weights {
		t += w * f[i]
	}
	if t < 0 {
		return 0
	}
	return int(t + 0.5)
}

// Feature indices.
const (
	fWords      = iota // starts of letter runs, and lower→upper case changes inside them
	fLongLetter        // letters beyond the 6th of a word piece
	fDigitGroup        // groups of up to three digits
	fPunct             // punctuation and symbol bytes
	fPunctRun          // runs of punctuation
	fSpaceRun          // runs of two or more spaces or tabs
	fNewline           // line breaks
	fWide              // characters of scripts written without spaces (CJK, kana, hangul)
	fOther             // non-ASCII letters of scripts written with spaces (accented Latin, Cyrillic, …)
	nFeatures
)

// weights are the factors of the features, fitted by least squares against
// o200k_base on the corpus (TestCalibrate prints them).
var weights = [nFeatures]float64{
	fWords: 1.126, fLongLetter: 0.191, fDigitGroup: 1.473, fPunct: 0.141, fPunctRun: 0.521,
	fSpaceRun: 1.478, fNewline: 0.100, fWide: 0.726, fOther: 0.128,
}

type class uint8

const (
	cNone class = iota
	cLower
	cUpper
	cDigit
	cPunct
	cSpace
	cNewline
	cNonASCII
)

var asciiClass = func() (t [128]class) {
	for c := 0; c < 128; c++ {
		switch {
		case c >= 'a' && c <= 'z':
			t[c] = cLower
		case c >= 'A' && c <= 'Z':
			t[c] = cUpper
		case c >= '0' && c <= '9':
			t[c] = cDigit
		case c == ' ' || c == '\t':
			t[c] = cSpace
		case c == '\n' || c == '\r':
			t[c] = cNewline
		default:
			t[c] = cPunct
		}
	}
	return
}()

// features counts the features of s.
func features(s string) [nFeatures]float64 {
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

// isWide reports whether r belongs to a script written without spaces,
// which BPE vocabularies cut about a character at a time.
func isWide(r rune) bool {
	return (r >= 0x3040 && r <= 0x30ff) || // kana
		(r >= 0x3400 && r <= 0x9fff) || // CJK ideographs
		(r >= 0xac00 && r <= 0xd7af) || // hangul
		(r >= 0xf900 && r <= 0xfaff) || (r >= 0xff00 && r <= 0xffef)
}
