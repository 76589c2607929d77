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
	var c counts
	c.add(cNone, s)
	return tokensOf(&c, 1)
}

// tokensOf weighs feature counts into tokens, scaled by scale (a sample's
// counts stand for a text scale times as long). The sum runs in feature
// order: a float sum's last bits depend on it.
func tokensOf(c *counts, scale float64) int {
	var t float64
	for i, w := range weights {
		t += w * float64(c[i])
	}
	t *= scale
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
	cNonASCII // a byte of a multi-byte character (or invalid UTF-8): decoded
)

// byteClass classifies every byte value, so that the scanner tells a byte
// of a multi-byte character from ASCII with the same load that classifies
// ASCII.
var byteClass = func() (t [256]class) {
	for c := range 256 {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = cNonASCII
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

// counts are the feature counts of a text. They are integers, added up
// across a sample's windows and converted to floats once, in tokensOf:
// converting and summing floats window by window cost Quick a quarter of
// its time. The floats are the same, integer sums being exact.
type counts [nFeatures]int

// features counts the features of s, as floats (for the calibration).
func features(s string) [nFeatures]float64 {
	var c counts
	c.add(cNone, s)
	var f [nFeatures]float64
	for i, v := range c {
		f[i] = float64(v)
	}
	return f
}

// add adds the features of s to c, s following a character of class prev:
// a window of a longer text must not count the word, number or run it
// begins in the middle of as a new one.
//
// ASCII is read a run of one class at a time (a word, a number, a
// punctuation or space run) in tight loops, since the features only change
// where the class does; other characters are decoded one by one.
func (c *counts) add(prev class, s string) {
	run := 0 // length of the current run of the same kind
	for i := 0; i < len(s); {
		k := byteClass[s[i]]
		j := i + 1
		switch k {
		case cLower:
			for j < len(s) && s[j]-'a' < 26 {
				j++
			}
			// Lower case goes on a word begun by capitals or by other
			// letters.
			if prev != cLower && prev != cUpper {
				c[fWords]++
				run = 0
			}
			n := j - i
			c[fLongLetter] += max(run+n, 6) - max(run, 6) // letters past the 6th
			run += n
		case cUpper:
			for j < len(s) && s[j]-'A' < 26 {
				j++
			}
			// A capital after lower case starts a word (camelCase).
			if prev != cUpper {
				c[fWords]++
				run = 0
			}
			n := j - i
			c[fLongLetter] += max(run+n, 6) - max(run, 6)
			run += n
		case cDigit:
			for j < len(s) && s[j]-'0' < 10 {
				j++
			}
			if prev != cDigit {
				run = 0
			}
			n := j - i
			c[fDigitGroup] += int(uint(run+n+2)/3 - uint(run+2)/3) // groups begun in the run
			run += n
		case cSpace:
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			if prev != cSpace {
				run = 0
			}
			n := j - i
			if run < 2 && run+n >= 2 {
				c[fSpaceRun]++
			}
			run += n
		case cNewline:
			for j < len(s) && (s[j] == '\n' || s[j] == '\r') {
				j++
			}
			c[fNewline] += j - i
		case cPunct:
			for j < len(s) && byteClass[s[j]] == cPunct {
				j++
			}
			c[fPunct] += j - i
			if prev != cPunct {
				c[fPunctRun]++
			}
		default: // cNonASCII
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
		i = j
		prev = k
	}
}

// classBefore returns the class of the character that ends s, as add
// classifies it.
func classBefore(s string) class {
	if s == "" {
		return cNone
	}
	if k := byteClass[s[len(s)-1]]; k != cNonASCII {
		return k
	}
	r, _ := utf8.DecodeLastRuneInString(s)
	switch {
	case isWide(r):
		return cNonASCII
	case unicode.IsLetter(r) || unicode.IsMark(r):
		return cLower
	}
	return cPunct
}

// isWide reports whether r belongs to a script written without spaces,
// which BPE vocabularies cut about a character at a time.
func isWide(r rune) bool {
	return (r >= 0x3040 && r <= 0x30ff) || // kana
		(r >= 0x3400 && r <= 0x9fff) || // CJK ideographs
		(r >= 0xac00 && r <= 0xd7af) || // hangul
		(r >= 0xf900 && r <= 0xfaff) || (r >= 0xff00 && r <= 0xffef)
}
