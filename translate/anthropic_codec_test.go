package translate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// anthFixture reads testdata/anthropic/<name>.
func anthFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "anthropic", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// anthGeneratedID matches the ids the codec makes up, so goldens stay
// stable.
var anthGeneratedID = regexp.MustCompile(`\b(msg|toolu)_[0-9a-f]{24}\b`)

func anthMaskIDs(b []byte) []byte {
	return anthGeneratedID.ReplaceAll(b, []byte("${1}_<generated>"))
}

// anthDumpJSON renders v as indented JSON for golden files: struct fields
// with zero values are left out so the dump shows what a codec set, raw JSON
// fields (schemas, cache_control) appear compacted as they are, and nothing
// is HTML-escaped.
func anthDumpJSON(v any) []byte {
	var b bytes.Buffer
	anthDumpValue(&b, reflect.ValueOf(v), 0)
	b.WriteByte('\n')
	return anthMaskIDs(b.Bytes())
}

var anthRawMessageType = reflect.TypeOf(json.RawMessage(nil))

func anthDumpValue(b *bytes.Buffer, v reflect.Value, depth int) {
	indent := func(d int) { b.WriteString(strings.Repeat("  ", d)) }
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		anthDumpValue(b, v.Elem(), depth)
	case reflect.Struct:
		b.WriteString("{")
		n := 0
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if f.IsZero() || !v.Type().Field(i).IsExported() {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			b.WriteByte('\n')
			indent(depth + 1)
			fmt.Fprintf(b, "%q: ", v.Type().Field(i).Name)
			anthDumpValue(b, f, depth+1)
		}
		if n > 0 {
			b.WriteByte('\n')
			indent(depth)
		}
		b.WriteString("}")
	case reflect.Slice:
		if v.Type() == anthRawMessageType {
			var c bytes.Buffer
			if err := json.Compact(&c, v.Bytes()); err != nil {
				fmt.Fprintf(b, "INVALID JSON %q", v.Bytes())
				return
			}
			b.Write(c.Bytes())
			return
		}
		b.WriteString("[")
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
			indent(depth + 1)
			anthDumpValue(b, v.Index(i), depth+1)
		}
		if v.Len() > 0 {
			b.WriteByte('\n')
			indent(depth)
		}
		b.WriteString("]")
	case reflect.String:
		var s bytes.Buffer
		enc := json.NewEncoder(&s)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v.String())
		b.Write(bytes.TrimSuffix(s.Bytes(), []byte("\n")))
	default:
		fmt.Fprintf(b, "%v", v.Interface())
	}
}

// anthIndent pretty-prints a JSON body for a golden file.
func anthIndent(t testing.TB, body []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, body)
	}
	buf.WriteByte('\n')
	return anthMaskIDs(buf.Bytes())
}

// anthDumpEvents renders IR events one per line.
func anthDumpEvents(evs []Event) []byte {
	var b strings.Builder
	usage := func(u *Usage) string {
		if u == nil {
			return ""
		}
		return fmt.Sprintf(" usage{in=%d out=%d cache_read=%d cache_write=%d reasoning=%d}",
			u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens)
	}
	for _, e := range evs {
		switch e.Type {
		case EventMessageStart:
			fmt.Fprintf(&b, "message_start id=%s model=%s%s\n", e.ID, e.Model, usage(e.Usage))
		case EventBlockStart:
			fmt.Fprintf(&b, "block_start %d %s", e.Index, e.Block)
			if e.Block == BlockToolCall {
				fmt.Fprintf(&b, " id=%s name=%s", e.ID, e.Name)
			}
			if s := e.Server; s != nil {
				fmt.Fprintf(&b, " id=%s kind=%s query=%q url=%q results=%d error=%q", s.ID, s.Kind, s.Query, s.URL, len(s.Results), s.ErrorCode)
			}
			if e.Signature != "" {
				fmt.Fprintf(&b, " data=%s", strconv.Quote(e.Signature))
			}
			b.WriteByte('\n')
		case EventBlockDelta:
			if c := e.Citation; c != nil {
				fmt.Fprintf(&b, "block_delta %d %s citation url=%s title=%q cited=%q span=%d..%d\n", e.Index, e.Block, c.URL, c.Title, c.CitedText, c.Start, c.End)
			} else if e.Signature != "" {
				fmt.Fprintf(&b, "block_delta %d %s signature=%s\n", e.Index, e.Block, strconv.Quote(e.Signature))
			} else {
				fmt.Fprintf(&b, "block_delta %d %s %s\n", e.Index, e.Block, strconv.Quote(e.Text))
			}
		case EventBlockStop:
			fmt.Fprintf(&b, "block_stop %d %s\n", e.Index, e.Block)
		case EventUsage:
			fmt.Fprintf(&b, "usage%s\n", usage(e.Usage))
		case EventMessageStop:
			fmt.Fprintf(&b, "message_stop %s seq=%q%s\n", e.Stop, e.StopSequence, usage(e.Usage))
		case EventError:
			fmt.Fprintf(&b, "error status=%d kind=%s message=%q\n", e.Err.Status, e.Err.Kind, e.Err.Message)
		default:
			fmt.Fprintf(&b, "unknown event %d\n", e.Type)
		}
	}
	return anthMaskIDs([]byte(b.String()))
}

func TestAnthropicCodecRegistered(t *testing.T) {
	c, ok := Lookup(ProtocolAnthropic)
	if !ok {
		t.Fatal("anthropic codec not registered")
	}
	if c.Protocol() != ProtocolAnthropic {
		t.Errorf("Protocol() = %q", c.Protocol())
	}
}

func TestAnthropicNewID(t *testing.T) {
	shape := regexp.MustCompile(`^toolu_[0-9a-f]{24}$`)
	a, b := newID("toolu_"), newID("toolu_")
	if !shape.MatchString(a) || !shape.MatchString(b) {
		t.Fatalf("ids %q %q do not have the toolu_ + 24 hex shape", a, b)
	}
	if a == b {
		t.Errorf("two generated ids are equal: %q", a)
	}
}

func TestAnthropicStopReasons(t *testing.T) {
	for wire, want := range map[string]StopReason{
		"end_turn": StopEndTurn, "max_tokens": StopMaxTokens, "stop_sequence": StopSequence,
		"tool_use": StopToolUse, "refusal": StopRefusal, "pause_turn": StopPauseTurn,
		"model_context_window_exceeded": StopContextWindow, "compaction": StopCompaction, "": "", "brand_new_reason": StopEndTurn,
	} {
		if got := anthDecodeStop(wire); got != want {
			t.Errorf("anthDecodeStop(%q) = %q, want %q", wire, got, want)
		}
	}
	for ir, want := range map[StopReason]string{
		StopEndTurn: "end_turn", StopMaxTokens: "max_tokens", StopSequence: "stop_sequence",
		StopToolUse: "tool_use", StopRefusal: "refusal", StopPauseTurn: "pause_turn",
		StopContextWindow: "model_context_window_exceeded", StopCompaction: "compaction", StopError: "end_turn", "": "end_turn",
	} {
		if got := anthStopReason(ir); got != want {
			t.Errorf("anthStopReason(%q) = %q, want %q", ir, got, want)
		}
	}
}
