package dialect_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/louter/louter/dialect"
	"github.com/louter/louter/translate"
)

// contentFuzzConfig picks a configuration from mode: the tool call format
// (auto without tools, auto with tools, native, hermes, qwen3_coder), the
// reasoning format (auto, fields, think, harmony), and with the high bit a
// call limit small enough to be hit.
func contentFuzzConfig(mode uint8) dialect.ContentConfig {
	formats := [...]translate.ToolCallFormat{"", translate.ToolCallsAuto, translate.ToolCallsNative, translate.ToolCallsHermes, translate.ToolCallsQwen3Coder}
	reasoning := [...]translate.ReasoningFormat{"", translate.ReasoningFormatFields, translate.ReasoningFormatThink, translate.ReasoningFormatHarmony}
	cfg := dialect.ContentConfig{
		ToolCalls: formats[int(mode&0x7f)%len(formats)],
		Reasoning: reasoning[int(mode&0x7f)/len(formats)%len(reasoning)],
	}
	if mode&0x7f%5 != 0 {
		cfg.Tools = contentTools
	}
	if mode&0x80 != 0 {
		cfg.MaxCallBytes = 48
	}
	return cfg
}

// contentFuzzPieces cuts in into pieces of 1 to 16 bytes, sizes drawn from
// seed.
func contentFuzzPieces(in string, seed uint16) []string {
	var pieces []string
	x := uint32(seed) | 1
	for in != "" {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		n := min(int(x%16)+1, len(in))
		pieces = append(pieces, in[:n])
		in = in[n:]
	}
	return pieces
}

func FuzzContentParser(f *testing.F) {
	for i, tc := range contentCases {
		f.Add(tc.in, uint8(i*7), uint16(i))
	}
	f.Fuzz(func(t *testing.T, in string, mode uint8, seed uint16) {
		cfg := contentFuzzConfig(mode)
		whole, _, _ := contentRun(cfg, []string{in})
		want := contentDump(whole)
		splits := [][]string{contentFuzzPieces(in, seed)}
		if len(in) <= 2048 {
			bytewise := make([]string, len(in))
			for i := 0; i < len(in); i++ {
				bytewise[i] = in[i : i+1]
			}
			splits = append(splits, bytewise)
		}
		for _, pieces := range splits {
			got, _, raw := contentRun(cfg, pieces)
			if g := contentDump(got); g != want {
				t.Fatalf("config %+v: fed in %d pieces:\n got:\n%s whole:\n%s", cfg, len(pieces), g, want)
			}
			for _, s := range raw {
				switch s.Kind {
				case dialect.SegmentToolCall:
					if s.Name == "" || !json.Valid([]byte(s.Arguments)) || s.Arguments[0] != '{' {
						t.Fatalf("bad call %+v", s)
					}
				case dialect.SegmentText, dialect.SegmentReasoning:
				default:
					t.Fatalf("bad segment %+v", s)
				}
			}
		}
		// Where nothing can be markup, every byte comes out as text.
		passthrough := cfg.ToolCalls == translate.ToolCallsNative && cfg.Reasoning == translate.ReasoningFormatFields
		noMarkup := !strings.Contains(in, "<") && (cfg.Reasoning == "" || cfg.Reasoning == translate.ReasoningFormatFields)
		if passthrough || noMarkup {
			if len(whole) > 1 || len(whole) == 1 && (whole[0].Kind != dialect.SegmentText || whole[0].Text != in) {
				t.Fatalf("config %+v: text %q came out as:\n%s", cfg, in, want)
			}
		}
	})
}
