package tokencount

import (
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// TestCountLongTextInPieces checks that a long text reaches the tokenizer
// in pieces of at most maxPiece bytes — its regular expression engine
// copies its whole input into runes, four bytes a byte of ASCII — and that
// the pieces add up to the count of the whole text, for texts cut where a
// space follows a word, and for one with no space to cut at (a base64
// blob), counted within a token a piece.
func TestCountLongTextInPieces(t *testing.T) {
	corpus := strings.Join(corpusTexts(loadCorpus(t)), "\n")
	blob := strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkrLw", 6000)
	tests := []struct {
		name  string
		text  string
		slack int // tokens the count may differ by
	}{
		{"corpus", corpus, 0},
		{"corpus repeated", strings.Repeat(corpus, 3), 0},
		{"no space", blob, len(blob)/maxPiece + 1},
	}
	for _, tt := range tests {
		for _, enc := range []Encoding{O200kBase, Cl100kBase} {
			t.Run(tt.name+"/"+string(enc), func(t *testing.T) {
				if len(tt.text) < 2*maxPiece {
					t.Fatalf("the text (%d bytes) is too short to need pieces", len(tt.text))
				}
				b := o200k
				if enc == Cl100kBase {
					b = cl100k
				}
				whole, err := b.get().Count(tt.text)
				if err != nil {
					t.Fatal(err)
				}
				longest := 0
				orig := tokenize
				tokenize = func(c tokenizer.Codec, s string) (int, error) {
					longest = max(longest, len(s))
					return orig(c, s)
				}
				defer func() { tokenize = orig }()
				got := CountText(tt.text, enc)
				if longest > maxPiece {
					t.Errorf("the tokenizer was handed %d bytes at once, more than %d", longest, maxPiece)
				}
				if d := got - whole; d < -tt.slack || d > tt.slack {
					t.Errorf("count in pieces = %d, whole = %d (slack %d)", got, whole, tt.slack)
				}
			})
		}
	}
}
