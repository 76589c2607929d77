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
	"time"
)

// oaiFixedNow pins the "created" field of encoded responses and chunks.
func oaiFixedNow(t testing.TB) {
	t.Helper()
	old := oaiNow
	oaiNow = func() time.Time { return time.Unix(1700000000, 0) }
	t.Cleanup(func() { oaiNow = old })
}

// oaiFixture reads testdata/openai_chat/<name>.
func oaiFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "openai_chat", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// oaiGeneratedID matches the ids the codec makes up (call_ + 24 hex), which
// differ on every run and are masked in goldens.
var oaiGeneratedID = regexp.MustCompile(`\b(call|chatcmpl)[_-][0-9a-f]{24}\b`)

func oaiMaskIDs(b []byte) []byte {
	return oaiGeneratedID.ReplaceAllFunc(b, func(m []byte) []byte {
		if bytes.HasPrefix(m, []byte("call")) {
			return []byte("call_<generated>")
		}
		return []byte("chatcmpl-<generated>")
	})
}

// oaiDumpJSON renders any IR value as indented JSON, deterministically:
// struct fields in declaration order, zero values left out, raw JSON
// (schemas, cache_control) embedded compactly. Generated ids are masked.
func oaiDumpJSON(v any) []byte {
	var b bytes.Buffer
	oaiDumpValue(&b, reflect.ValueOf(v), 0)
	b.WriteByte('\n')
	return oaiMaskIDs(b.Bytes())
}

var oaiRawMessageType = reflect.TypeOf(json.RawMessage(nil))

func oaiDumpValue(b *bytes.Buffer, v reflect.Value, depth int) {
	indent := func(d int) { b.WriteString("\n" + strings.Repeat("  ", d)) }
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		v = v.Elem()
	}
	if v.Type() == oaiRawMessageType {
		var c bytes.Buffer
		if err := json.Compact(&c, v.Bytes()); err != nil {
			fmt.Fprintf(b, "%q", v.Bytes()) // invalid JSON: show it as a string
			return
		}
		b.Write(c.Bytes())
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		b.WriteByte('{')
		n := 0
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if !v.Type().Field(i).IsExported() || f.IsZero() {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			indent(depth + 1)
			fmt.Fprintf(b, "%q: ", v.Type().Field(i).Name)
			oaiDumpValue(b, f, depth+1)
		}
		if n > 0 {
			indent(depth)
		}
		b.WriteByte('}')
	case reflect.Slice, reflect.Array:
		b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(depth + 1)
			oaiDumpValue(b, v.Index(i), depth+1)
		}
		if v.Len() > 0 {
			indent(depth)
		}
		b.WriteByte(']')
	case reflect.String:
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v.String())
		b.Truncate(b.Len() - 1) // Encode ends with a newline
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		b.WriteString(strconv.FormatFloat(v.Float(), 'g', -1, 64))
	default:
		fmt.Fprintf(b, "%q", fmt.Sprint(v.Interface()))
	}
}

// oaiDumpEvents renders IR events one per line, for stream goldens.
func oaiDumpEvents(evs []Event) []byte {
	var b bytes.Buffer
	for i := range evs {
		e := &evs[i]
		b.WriteString(e.Type.String())
		switch e.Type {
		case EventMessageStart:
			fmt.Fprintf(&b, " id=%q model=%q", e.ID, e.Model)
		case EventBlockStart:
			fmt.Fprintf(&b, " %d %s", e.Index, e.Block)
			if e.Block == BlockToolCall {
				fmt.Fprintf(&b, " id=%q name=%q", e.ID, e.Name)
			}
			if e.Signature != "" {
				fmt.Fprintf(&b, " data=%q", e.Signature)
			}
		case EventBlockDelta:
			fmt.Fprintf(&b, " %d %s", e.Index, e.Block)
			if e.Signature != "" {
				fmt.Fprintf(&b, " signature=%q", e.Signature)
			} else {
				fmt.Fprintf(&b, " %q", e.Text)
			}
		case EventBlockStop:
			fmt.Fprintf(&b, " %d %s", e.Index, e.Block)
		case EventMessageStop:
			fmt.Fprintf(&b, " %s", e.Stop)
			if e.StopSequence != "" {
				fmt.Fprintf(&b, " sequence=%q", e.StopSequence)
			}
		case EventError:
			fmt.Fprintf(&b, " status=%d kind=%s code=%q message=%q", e.Err.Status, e.Err.Kind, e.Err.Code, e.Err.Message)
		}
		if e.Usage != nil {
			u := e.Usage
			fmt.Fprintf(&b, " usage{in=%d out=%d cache_read=%d cache_write=%d reasoning=%d}",
				u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens)
		}
		b.WriteByte('\n')
	}
	return oaiMaskIDs(b.Bytes())
}

func TestOpenAIChatCodecRegistered(t *testing.T) {
	c, ok := Lookup(ProtocolOpenAIChat)
	if !ok {
		t.Fatal("openai_chat codec is not registered")
	}
	if c.Protocol() != ProtocolOpenAIChat {
		t.Fatalf("Protocol() = %q", c.Protocol())
	}
}

func TestOpenAIChatFinishReasons(t *testing.T) {
	decode := map[string]StopReason{
		"stop": StopEndTurn, "length": StopMaxTokens, "tool_calls": StopToolUse,
		"function_call": StopToolUse, "content_filter": StopRefusal, "": StopEndTurn, "weird": StopEndTurn,
	}
	for in, want := range decode {
		if got := oaiStopReason(in); got != want {
			t.Errorf("oaiStopReason(%q) = %q, want %q", in, got, want)
		}
	}
	encode := map[StopReason]string{
		StopEndTurn: "stop", StopSequence: "stop", StopPauseTurn: "stop", StopError: "stop",
		StopMaxTokens: "length", StopContextWindow: "length", StopToolUse: "tool_calls", StopRefusal: "content_filter",
	}
	for in, want := range encode {
		if got := oaiFinishReason(in); got != want {
			t.Errorf("oaiFinishReason(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOpenAIChatParseDataURL(t *testing.T) {
	tests := []struct {
		url, mt, data string
		ok            bool
	}{
		{"data:image/png;base64,AAAA", "image/png", "AAAA", true},
		{"data:application/pdf;name=x.pdf;base64,JVBE", "application/pdf", "JVBE", true},
		{"data:text/plain,hello", "", "", false},
		{"data:image/png;base64", "", "", false},
		{"https://example.com/a.png", "", "", false},
	}
	for _, tt := range tests {
		mt, data, ok := oaiParseDataURL(tt.url)
		if mt != tt.mt || data != tt.data || ok != tt.ok {
			t.Errorf("oaiParseDataURL(%q) = %q, %q, %v; want %q, %q, %v", tt.url, mt, data, ok, tt.mt, tt.data, tt.ok)
		}
	}
}

func TestOpenAIChatNewIDs(t *testing.T) {
	a, b := oaiNewCallID(), oaiNewCallID()
	if a == b || !oaiGeneratedID.MatchString(a) {
		t.Errorf("call ids %q, %q: want distinct call_ + 24 hex", a, b)
	}
	if id := oaiNewCompletionID(); !oaiGeneratedID.MatchString(id) || !strings.HasPrefix(id, "chatcmpl-") {
		t.Errorf("completion id %q", id)
	}
}
