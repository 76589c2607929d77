package translate

import "github.com/tidwall/gjson"

// maxUsageCount bounds one token count read from a backend. No response
// comes near it (a trillion tokens), and the sums louter makes of counts
// (Gemini's prompt plus tool-use tokens, Anthropic's cached and uncached
// input, the limiter's input plus output) stay far from overflowing.
const maxUsageCount = 1 << 40

// usageCount reads one token count a backend reported. A count only adds
// up: a negative figure would be credited back to the client's token
// limits, budget and ledger, so it reads as 0. A fraction reads as its
// integer part, and a figure past maxUsageCount (or past what an int64
// holds, which gjson's Int would wrap to a negative) as maxUsageCount. A
// string holding a number is read as gjson's Int reads it; any other
// value is 0.
func usageCount(v gjson.Result) int {
	switch v.Type {
	case gjson.Number:
		switch {
		case v.Num >= maxUsageCount:
			return maxUsageCount
		case v.Num > 0: // also false for NaN, which JSON cannot spell anyway
			return int(v.Num)
		}
	case gjson.String:
		return min(max(int(v.Int()), 0), maxUsageCount)
	}
	return 0
}
