package translate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// anthRefSeeds are request bodies that take the decoder down its rare
// paths: repeated members, a block's type after its content, escaped
// names, values of unexpected kinds, errors before invalid JSON.
var anthRefSeeds = []string{
	`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"m","messages":[{"content":[{"type":"text","text":"a"}],"role":"user","content":"b"}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"u"}}],"content":[{"type":"bogus"}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"tool_use_id":"t","content":[{"type":"image","source":{"type":"url","url":"u"}},{"type":"bogus"}],"type":"tool_result"}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"x"}],"type":"text","text":"hi"}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"x"}],"content":"plain","is_error":true}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","content":[7],"tool_use_id":"t"}]}]}`,
	`{"model":"m","messages":[{"role":"bogus","content":[7]}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"document","source":{"type":"content","content":{"a":{"type":"text","text":"x"}}}}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"document","source":{"type":"content","content":null}}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"document","source":{"type":"content","type":"text","content":"c","data":"d"},"title":3,"context":"x","citations":{"enabled":"true"}}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"},"source":"x"}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":[{"type":"url"}]},{"type":"text","text":1.50,"citations":[{}]}]}]}`,
	`{"model":"m","messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":{"a": 1}},{"type":"redacted_thinking","data":true},{"type":"tool_use","id":"i","name":"n","input":null}]}]}`,
	`{"mod\u0065l":"m","messages":[{"r\u006fle":"user","content":"caf\u00e9 \ud83d\ude00 \ud800"}],"sys\u0074em":[{"type":"text","text":"s\n"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"name":"a","description":"d\"","description":null,"strict":true,"strict":"no","input_schema":{"type":"object"},"defer_loading":true,"x\u0079":1}]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"web_search_20250305"},{"type":"custom","name":"n","description":5}]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"messages":[{"role":"system","content":[{"type":"text","text":"a"},{"type":"image"}]}],"system":"s","system":"t"}`,
	`{"model":42,"messages":[}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"text"}]}]} x`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":1e3,"temperature":0.5,"top_k":3,"stop_sequences":["a"],"metadata":{"user_id":"u","x":1},"tool_choice":{"type":"tool","name":"n","disable_parallel_tool_use":true},"thinking":{"type":"enabled","budget_tokens":"12"},"output_config":{"effort":"low","format":{"type":"json_schema","schema":{}}}}`,
	` [1] `,
	``,
	`{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"toolu_` + strings.Repeat("c", 70) + `-ts-QUJD","name":"f","input":{}},{"type":"tool_use","id":"-th-\u00e9","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_` + strings.Repeat("c", 70) + `-ts-QUJD","content":"r"},{"type":"tool_result","tool_use_id":"-th-\u00e9","content":"r"}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":"ab` + "\xff" + `\u2028` + "\u2028" + `"}]}`,
	// Server tool blocks (anthropic_server_tool_blocks.go): translated,
	// untranslated, failed, and malformed.
	`{"model":"m","messages":[{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q\u00e9"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"u","title":"t","encrypted_content":"e","page_age":"1d"},{"type":"other"}]},{"type":"server_tool_use","id":"s2","name":"code_execution","input":{}},{"type":"web_fetch_tool_result","tool_use_id":"s3","content":{"type":"web_fetch_tool_error","error_code":"url_not_accessible"}}]}]}`,
	`{"model":"m","messages":[{"role":"assistant","content":[{"type":"server_tool_use","name":7,"input":[1]},{"type":"web_search_tool_result","content":{"type":"web_search_tool_result_error"}},{"type":"web_fetch_tool_result","tool_use_id":"s","content":{"type":"web_fetch_result","url":"u","content":{"type":"document","source":{"type":"text","data":"d"},"title":"t"}}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"web_search_tool_result"}]}]}]}`,
}

// FuzzAnthropicDecodeRequestReference holds the single-pass decoder to the
// gjson decoder it replaced (anthRefDecodeRequest): the same IR, the same
// Drop notes, the same errors, for any body. It also checks that the
// body is left as it was and that every splice form is the form of its
// text.
func FuzzAnthropicDecodeRequestReference(f *testing.F) {
	for _, name := range []string{"request_claude_code.json", "request_features.json", "request_roundtrip.json"} {
		f.Add(anthFixture(f, name))
	}
	for _, s := range anthRefSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		anthCheckAgainstReference(t, body)
	})
}

// TestAnthropicDecodeRequestReference runs the fuzz test's check on the
// fixtures, the seeds and the Claude Code request of the benchmarks.
func TestAnthropicDecodeRequestReference(t *testing.T) {
	bodies := map[string][]byte{}
	for _, name := range []string{"request_claude_code.json", "request_features.json", "request_roundtrip.json"} {
		bodies[name] = anthFixture(t, name)
	}
	big, err := os.ReadFile(filepath.Join("..", "testdata", "bench", "claude_code_100k.json"))
	if err != nil {
		t.Fatal(err)
	}
	bodies["claude_code_100k.json"] = big
	for i, s := range anthRefSeeds {
		bodies["seed "+string(rune('a'+i))] = []byte(s)
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) { anthCheckAgainstReference(t, body) })
	}
}

func anthCheckAgainstReference(t *testing.T, body []byte) {
	t.Helper()
	orig := bytes.Clone(body)
	got, gerr := anthropicCodec{}.DecodeRequest(body)
	if !bytes.Equal(body, orig) {
		t.Fatal("DecodeRequest modified the body")
	}
	want, werr := anthRefDecodeRequest(body)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("error %v, reference error %v, for %q", gerr, werr, body)
	}
	if gerr != nil {
		var g, w *Error
		if !errors.As(gerr, &g) || !errors.As(werr, &w) {
			t.Fatalf("errors %T %T", gerr, werr)
		}
		if g.Status != w.Status || g.Kind != w.Kind || g.Message != w.Message || g.Param != w.Param {
			t.Fatalf("error %+v, reference %+v, for %q", g, w, body)
		}
		return
	}
	if !gjson.ValidBytes(body) {
		t.Fatalf("decoded invalid JSON %q", body)
	}
	var gb, wb bytes.Buffer
	anthDumpValue(&gb, reflect.ValueOf(got), 0)
	anthDumpValue(&wb, reflect.ValueOf(want), 0)
	if gb.String() != wb.String() {
		t.Fatalf("IR differs from the reference's for %q:\n--- got\n%s\n--- reference\n%s", body, gb.String(), wb.String())
	}
	anthCheckForms(t, got)
	checkToolIDLimits(t, got)
}

// anthCheckForms checks that every splice form of req is the form of its
// text and can be spliced.
func anthCheckForms(t *testing.T, req *Request) {
	t.Helper()
	check := func(where, s string, f jsonForm) {
		if f.esc == "" {
			return
		}
		text := f.esc
		if strings.Contains(f.esc, `\`) {
			text = string(jsonUnescape(nil, []byte(f.esc)))
		}
		if f.of != s || text != s || !jsonSpliceable([]byte(f.esc)) {
			t.Errorf("%s: form %q of %q does not belong to %q", where, f.esc, f.of, s)
		}
	}
	var parts func(where string, ps []Part)
	parts = func(where string, ps []Part) {
		for i := range ps {
			check(where, ps[i].Text, ps[i].textForm)
			if tr := ps[i].ToolResult; tr != nil {
				parts(where+".tool_result", tr.Content)
			}
		}
	}
	parts("system", req.System)
	for _, m := range req.Messages {
		parts("messages", m.Parts)
	}
	for _, tool := range req.Tools {
		check("tools", tool.Description, tool.descForm)
	}
}
