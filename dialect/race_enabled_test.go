//go:build race

package dialect_test

// The race detector makes the content parser's two-chunk split test many
// times slower; under it, byte-by-byte feeding (which crosses every boundary
// in one pass) and a sample of two-chunk splits run instead. The dialect
// split tests share their decoding through a streamtest.Memo and try every
// byte under the race detector too.
func init() { raceEnabled = true }
