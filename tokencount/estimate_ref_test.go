package tokencount

import (
	"unicode"
	"unicode/utf8"
)

// The estimator's sampling and class lookup as they were before counts
// were kept as integers and read through one table (commit 1daac65), kept
// as the reference the differential tests hold the fast one to: same
// floats, summed window by window, same token counts. A window's features
// are read by the definition, featuresByByteAfter (features_test.go).

// refSampledEstimate is sampledEstimate as it was: each window's features
// as floats, summed window by window.
func refSampledEstimate(s string) int {
	if len(s) <= sampleWindows*sampleWindow {
		return refTokensOf(featuresByByteAfter(cNone, s), 1)
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
		w := featuresByByteAfter(refClassBefore(s[:a]), s[a:b])
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
