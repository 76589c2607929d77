//go:build race

package stream_test

// The race detector makes the exhaustive two-chunk split test about twenty
// times slower; under it, byte-by-byte feeding (which crosses every boundary
// in one pass) and a sample of two-chunk splits run instead.
func init() { raceEnabled = true }
