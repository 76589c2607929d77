package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/tidwall/gjson"
	"go.uber.org/zap"

	"github.com/louter/louter/translate"
)

func TestUnmarshalCaddyfileListing(t *testing.T) {
	d := caddyfile.NewTestDispenser(`
	louter {
		list_models_timeout 2s
		backend oai {
			protocol openai_chat
			list_models passthrough
			reverse_proxy localhost:9001
		}
		model claude-* oai gpt-5.5 {
			list claude-sonnet-4-5 claude-opus-4-1
			list claude-haiku-4-5
		}
		model gpt-5.5 oai
	}`)
	var l Louter
	if err := l.UnmarshalCaddyfile(d); err != nil {
		t.Fatal(err)
	}
	if l.Backends["oai"].ListModels != "passthrough" {
		t.Errorf("list_models = %q", l.Backends["oai"].ListModels)
	}
	if l.ListModelsTimeout != caddy.Duration(2*time.Second) {
		t.Errorf("list_models_timeout = %v", l.ListModelsTimeout)
	}
	want := []ModelRoute{
		{Match: "claude-*", Backend: "oai", Rename: "gpt-5.5", List: []string{"claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"}},
		{Match: "gpt-5.5", Backend: "oai"},
	}
	if !reflect.DeepEqual(l.Models, want) {
		t.Errorf("models = %+v", l.Models)
	}

	for _, tt := range []struct{ name, input, want string }{
		{"list without names", "louter {\nmodel a* b {\nlist\n}\n}", "wrong argument count"},
		{"unknown route setting", "louter {\nmodel a* b {\ncolor blue\n}\n}", "unrecognized louter model subdirective 'color'"},
		{"list_models bad value", "louter {\nbackend x {\nprotocol anthropic\nlist_models all\n}\n}", "list_models must be 'passthrough'"},
		{"list_models without value", "louter {\nbackend x {\nlist_models\n}\n}", "wrong argument count"},
	} {
		var l Louter
		err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestValidateListing(t *testing.T) {
	l := &Louter{
		Backends: map[string]*Backend{"a": {ListModels: "all"}, "b": {ListModels: "passthrough"}},
		Models:   []ModelRoute{{Match: "claude-*", Backend: "a", List: []string{"claude-x", "gpt-5"}}},
	}
	errs := l.validateListing()
	if len(errs) != 2 || !strings.Contains(errs[0].Error()+errs[1].Error(), `list_models must be "passthrough", not "all"`) ||
		!strings.Contains(errs[0].Error()+errs[1].Error(), `listed name "gpt-5" does not match`) {
		t.Errorf("errors %v", errs)
	}
}

// TestModelListPages checks the pagination of the Anthropic and Gemini
// lists and their errors, without backends to ask.
func TestModelListPages(t *testing.T) {
	l := &Louter{logger: zap.NewNop(), Models: []ModelRoute{
		{Match: "m1", Backend: "x"}, {Match: "m*", Backend: "x", List: []string{"m2", "m3", "m1"}}, {Match: "m4", Backend: "x"},
	}}
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	gem, _ := translate.Lookup(translate.ProtocolGemini)
	oai, _ := translate.Lookup(translate.ProtocolOpenAIChat)
	tests := []struct {
		codec  translate.Codec
		query  string
		status int
		want   string // the ids, or names, of the page; then the paging fields
	}{
		{oai, "", 200, "m1 m2 m3 m4"},
		{anth, "", 200, "m1 m2 m3 m4 | false m1 m4"},
		{anth, "limit=2", 200, "m1 m2 | true m1 m2"},
		{anth, "limit=2&after_id=m2", 200, "m3 m4 | false m3 m4"},
		{anth, "limit=2&before_id=m4", 200, "m2 m3 | true m2 m3"},
		{anth, "limit=5&before_id=m2", 200, "m1 | false m1 m1"},
		{anth, "after_id=m4", 200, " | false  "},
		{anth, "limit=0", 400, ""},
		{anth, "limit=1001", 400, ""},
		{gem, "pageSize=3", 200, "models/m1 models/m2 models/m3 | bTM"},
		{gem, "pageSize=3&pageToken=bTM", 200, "models/m4 | "},
		{gem, "pageToken=zzz", 400, ""},
		{gem, "pageSize=-1", 400, ""},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "/v1/models?"+tt.query, nil)
		w := httptest.NewRecorder()
		if err := l.serveModelList(w, r, tt.codec); err != nil {
			t.Fatal(err)
		}
		if w.Code != tt.status {
			t.Errorf("%s %s: %d %s", tt.codec.Protocol(), tt.query, w.Code, w.Body)
			continue
		}
		if w.Code != 200 {
			continue
		}
		b := w.Body.Bytes()
		var got string
		switch tt.codec.Protocol() {
		case translate.ProtocolAnthropic:
			got = join(gjson.GetBytes(b, "data.#.id")) + " | " + gjson.GetBytes(b, "has_more").Raw + " " + gjson.GetBytes(b, "first_id").String() + " " + gjson.GetBytes(b, "last_id").String()
		case translate.ProtocolGemini:
			got = join(gjson.GetBytes(b, "models.#.name")) + " | " + gjson.GetBytes(b, "nextPageToken").String()
		default:
			got = join(gjson.GetBytes(b, "data.#.id"))
		}
		if got != tt.want {
			t.Errorf("%s %s: %q, want %q", tt.codec.Protocol(), tt.query, got, tt.want)
		}
	}
}

func join(r gjson.Result) string {
	var s []string
	for _, x := range r.Array() {
		s = append(s, x.String())
	}
	return strings.Join(s, " ")
}
