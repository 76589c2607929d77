package tokencount

import (
	"unicode"
	"unicode/utf8"
)

// The estimator as it was before counts were kept as integers and read
// through one table (commit 1daac65), kept as the reference the
// differential tests hold the fast one to: same features, same floats,
// same token counts.

// refSampledEstimate is sampledEstimate as it was: each window's features
// as floats, summed window by window.
func refSampledEstimate(s string) int {
	if len(s) <= sampleWindows*sampleWindow {
		return refTokensOf(refFeaturesAfter(cNone, s), 1)
	}
	var f [nFeatures]float64
	read := 0
	step := (len(s) - sampleWindow) / (sampleWindows - 1)
	for i := range sampleWindows {
		a := cutRune(s, i*step)
		b := len(s)
		if i < sampleWindows-1 {
			b = cutRune(s, a+sampleWindow)
		}
		w := refFeaturesAfter(refClassBefore(s[:a]), s[a:b])
		for k := range f {
			f[k] += w[k]
		}
		read += b - a
	}
	return refTokensOf(f, float64(len(s))/float64(read))
}

func refTokensOf(f [nFeatures]float64, scale float64) int {
	var t float64
	for i, w := range weights {
		t += w * f[i]
	}
	t *= scale
	if t < 0 {
		return 0
	}
	return int(t + 0.5)
}

var refASCIIClass = func() (t [128]class) {
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

func refFeaturesAfter(prev class, s string) [nFeatures]float64 {
	var c [nFeatures]int
	run := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			i += n
			switch {
			case refIsWide(r):
				c[fWide]++
				prev = cNonASCII
			case unicode.IsLetter(r) || unicode.IsMark(r):
				c[fOther]++
				if prev != cLower && prev != cUpper {
					c[fWords]++
					run = 0
				}
				run++
				prev = cLower
			default:
				c[fPunct] += n
				if prev != cPunct {
					c[fPunctRun]++
				}
				prev = cPunct
			}
			continue
		}
		k := refASCIIClass[b]
		j := i + 1
		switch k {
		case cLower:
			for j < len(s) && s[j]-'a' < 26 {
				j++
			}
			if prev != cLower && prev != cUpper {
				c[fWords]++
				run = 0
			}
			n := j - i
			c[fLongLetter] += max(0, run+n-max(run, 6))
			run += n
		case cUpper:
			for j < len(s) && s[j]-'A' < 26 {
				j++
			}
			if prev != cUpper {
				c[fWords]++
				run = 0
			}
			n := j - i
			c[fLongLetter] += max(0, run+n-max(run, 6))
			run += n
		case cDigit:
			for j < len(s) && s[j]-'0' < 10 {
				j++
			}
			if prev != cDigit {
				run = 0
			}
			n := j - i
			c[fDigitGroup] += (run+n+2)/3 - (run+2)/3
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
			for j < len(s) && s[j] < utf8.RuneSelf && refASCIIClass[s[j]] == cPunct {
				j++
			}
			c[fPunct] += j - i
			if prev != cPunct {
				c[fPunctRun]++
			}
		}
		i = j
		prev = k
	}
	var f [nFeatures]float64
	for i, v := range c {
		f[i] = float64(v)
	}
	return f
}

func refClassBefore(s string) class {
	if s == "" {
		return cNone
	}
	if b := s[len(s)-1]; b < utf8.RuneSelf {
		return refASCIIClass[b]
	}
	r, _ := utf8.DecodeLastRuneInString(s)
	switch {
	case refIsWide(r):
		return cNonASCII
	case unicode.IsLetter(r) || unicode.IsMark(r):
		return cLower
	}
	return cPunct
}

func refIsWide(r rune) bool {
	return (r >= 0x3040 && r <= 0x30ff) ||
		(r >= 0x3400 && r <= 0x9fff) ||
		(r >= 0xac00 && r <= 0xd7af) ||
		(r >= 0xf900 && r <= 0xfaff) || (r >= 0xff00 && r <= 0xffef)
}
