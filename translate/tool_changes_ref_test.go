package translate

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/tidwall/gjson"
)

// applyToolChangesRef is the applyToolChanges that read the whole body
// again with gjson whenever it mentioned a marker, kept as the reference
// the decoder's notes are held to (TestApplyToolChangesReference).
func applyToolChangesRef(body []byte, req *Request) *Error {
	marked := false
	for _, m := range refToolChangeMarkers {
		if bytes.Contains(body, m) {
			marked = true
			break
		}
	}
	if !marked {
		return nil
	}
	root := gjson.ParseBytes(body)
	declared := map[string]bool{}
	inForce := map[string]bool{}
	root.Get("tools").ForEach(func(_, t gjson.Result) bool {
		name := t.Get("name").String()
		declared[name] = true
		if !t.Get("defer_loading").Bool() {
			inForce[name] = true
		}
		return true
	})
	known := maps.Clone(declared) // declared, and defined inline so far
	var inline []Tool             // tools defined in tool_addition blocks, in order
	msgs := root.Get("messages").Array()
	if len(msgs) != len(req.Messages) {
		return nil // not the body req was decoded from: leave req alone
	}
	for i, m := range msgs {
		content := m.Get("content")
		if !content.IsArray() {
			continue
		}
		switch m.Get("role").String() {
		case "system":
			var notes []Part
			for j, b := range content.Array() {
				at := "messages." + strconv.Itoa(i) + ".content." + strconv.Itoa(j)
				note, tool, err := systemToolChange(b, at, known, inForce)
				if err != nil {
					return err
				}
				if tool != nil {
					inline = append(inline, *tool)
					known[tool.Name] = true // a later tool_removal may name it
				}
				if note != "" {
					notes = append(notes, Part{Type: PartText, Text: note})
				}
			}
			if len(notes) > 0 {
				req.Messages[i].Parts = append(append([]Part(nil), req.Messages[i].Parts...), notes...)
			}
		case "user":
			for j, b := range content.Array() {
				if b.Get("type").String() != "tool_result" || !b.Get("content").IsArray() {
					continue
				}
				var loaded []string
				for k, c := range b.Get("content").Array() {
					if c.Get("type").String() != "tool_reference" {
						continue
					}
					at := "messages." + strconv.Itoa(i) + ".content." + strconv.Itoa(j) + ".content." + strconv.Itoa(k) + ".tool_name"
					name := c.Get("tool_name").String()
					if name == "" {
						return &Error{Status: 400, Kind: ErrInvalidRequest, Param: at, Message: at + ": a tool_reference needs a tool_name"}
					}
					// A name tools[] does not declare loads nothing, but
					// the model is still told what the result said.
					if declared[name] {
						inForce[name] = true
					}
					loaded = append(loaded, name)
				}
				if len(loaded) > 0 {
					noteLoaded(req.Messages[i].Parts, b.Get("tool_use_id").String(), loaded)
				}
			}
		}
	}
	settleToolList(req, declared, inForce, inline)
	return nil
}

// refToolChangeMarkers are the members whose presence made the reference
// read the body again.
var refToolChangeMarkers = [...][]byte{[]byte(`"defer_loading"`), []byte(`"tool_addition"`), []byte(`"tool_removal"`), []byte(`"tool_reference"`)}

// toolChangeSeeds are bodies that change tools in every way the grammar
// allows and some it does not.
var toolChangeSeeds = []string{
	toolChangesBody,
	`{"model":"m","max_tokens":1,"tools":[{"name":"a","input_schema":{}},{"name":"b","input_schema":{},"defer_loading":true},{"name":"c","input_schema":{},"defer_loading":false},{"type":"web_search_20250305","name":"ws"}],"messages":[{"role":"user","content":"x"}]}`,
	`{"model":"m","max_tokens":1,"tools":[{"name":"a","input_schema":{},"defer_loading":"true"},{"name":"a","input_schema":{}}],"messages":[{"role":"user","content":"x"}]}`,
	`{"model":"m","max_tokens":1,"tools":[{"name":"b","input_schema":{},"defer_loading":true}],"messages":[{"role":"user","content":[{"content":[{"tool_name":"b","type":"tool_reference"},{"type":"text","text":"t"}],"type":"tool_result","tool_use_id":"u"}]},{"role":"system","content":[{"type":"text","text":"s"}]}]}`,
	`{"model":"m","max_tokens":1,"tools":[{"type":"web_search_20250305","name":"ws"}],"messages":[{"role":"system","content":[{"type":"tool_addition","tool":{"type":"tool_reference","name":"ws"}},{"type":"tool_addition","tool":{"type":"tool_definition","definition":{"name":"ws","input_schema":{}}}}]}]}`,
	`{"model":"m","max_tokens":1,"tools":[{"name":"a","input_schema":{}}],"messages":[{"role":"assistant","content":[{"type":"tool_reference","tool_name":"a"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"u","content":[{"type":"document","source":{"type":"content","content":[{"type":"tool_reference","tool_name":"a"}]}}]}]}]}`,
	`{"model":"m","max_tokens":1,"tools":[{"name":"a","input_schema":{},"defer_loading":true}],"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"u","content":[{"type":"tool_reference","tool_name":"zz"},{"type":"tool_reference","tool_name":"a"}]}]},{"role":"system","content":[{"type":"tool_removal","tool":{"type":"tool_reference","name":"a"}}]}]}`,
	`{"model":"m","max_tokens":1,"tools":[{"name":"a","input_schema":{},"defer_loading":true}],"messages":[{"role":"system","content":[{"type":"image","source":{"type":"url","url":"u"}}]}]}`,
	`{"model":"m","max_tokens":1,"messages":[{"role":"system","content":"tool_addition"},{"role":"user","content":[{"type":"tool_removal"}]}]}`,
}

// TestApplyToolChangesReference holds applyToolChanges, which reads only
// what the decoder noted, to the reference that read the whole body: the
// same request and the same error for the seeds above, the tool change
// tests' bodies, the fixtures and the benchmarks' Claude Code request.
func TestApplyToolChangesReference(t *testing.T) {
	bodies := map[string][]byte{}
	for i, s := range toolChangeSeeds {
		bodies["seed "+strconv.Itoa(i)] = []byte(s)
	}
	for _, name := range []string{"request_claude_code.json", "request_features.json", "request_roundtrip.json"} {
		bodies[name] = anthFixture(t, name)
	}
	big, err := os.ReadFile(filepath.Join("..", "testdata", "bench", "claude_code_100k.json"))
	if err != nil {
		t.Fatal(err)
	}
	bodies["claude_code_100k.json"] = big
	compared := 0
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			if toolChangesCheckAgainstReference(t, body) {
				compared++
			}
		})
	}
	if compared < len(bodies)-1 {
		t.Errorf("compared %d of %d bodies", compared, len(bodies))
	}
}

// FuzzApplyToolChangesReference is TestApplyToolChangesReference for any
// body.
func FuzzApplyToolChangesReference(f *testing.F) {
	for _, s := range toolChangeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		toolChangesCheckAgainstReference(t, body)
	})
}

// toolChangesCheckAgainstReference decodes body twice, applies the tool
// changes to one with applyToolChanges and to the other with the
// reference, and fails when the results differ. It compares only where
// the two are meant to agree, and reports whether it compared: a body
// the decoder refuses, one with a repeated member (the decoder reads the
// last, gjson the first), and one the reference reads again for a marker
// that is not a tool change (a string "tool_reference" elsewhere) are
// skipped.
func toolChangesCheckAgainstReference(t *testing.T, body []byte) bool {
	t.Helper()
	got, err := anthropicCodec{}.DecodeRequest(body)
	if err != nil || jsonRepeatsMember(gjson.ParseBytes(body)) {
		return false
	}
	want, _ := anthropicCodec{}.DecodeRequest(body)
	marked := false
	for _, m := range refToolChangeMarkers {
		marked = marked || bytes.Contains(body, m)
	}
	if changes := got.toolChanges != nil && got.toolChanges.changes; changes != marked {
		return false
	}
	gerr, werr := applyToolChanges(body, got), applyToolChangesRef(body, want)
	if (gerr == nil) != (werr == nil) || gerr != nil && *gerr != *werr {
		t.Fatalf("error %v, reference %v, for %q", gerr, werr, body)
	}
	if gerr != nil {
		return true
	}
	var gb, wb bytes.Buffer
	anthDumpValue(&gb, reflect.ValueOf(got), 0)
	anthDumpValue(&wb, reflect.ValueOf(want), 0)
	if gb.String() != wb.String() {
		t.Fatalf("request differs from the reference's for %q:\n--- got\n%s\n--- reference\n%s", body, gb.String(), wb.String())
	}
	return true
}

// jsonRepeatsMember reports whether an object anywhere in v has a member
// name twice.
func jsonRepeatsMember(v gjson.Result) bool {
	if !v.IsObject() && !v.IsArray() {
		return false
	}
	repeats := false
	seen := map[string]bool{}
	v.ForEach(func(k, e gjson.Result) bool {
		if v.IsObject() {
			if seen[k.String()] {
				repeats = true
				return false
			}
			seen[k.String()] = true
		}
		repeats = jsonRepeatsMember(e)
		return !repeats
	})
	return repeats
}
