package translate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestServerToolsDecode reads each protocol's server tools into the IR.
func TestServerToolsDecode(t *testing.T) {
	tests := []struct {
		name   string
		p      Protocol
		body   string
		want   []ServerTool
		choice *ToolChoice
	}{
		{"anthropic web search with options", ProtocolAnthropic,
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"}],"tool_choice":{"type":"tool","name":"web_search"},
			"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":3,"allowed_domains":["a.com"],"user_location":{"type":"approximate","city":"Paris","timezone":"Europe/Paris"}}]}`,
			[]ServerTool{{Kind: ServerWebSearch, Type: "web_search_20250305", Param: "tools.0", MaxUses: 3, AllowedDomains: []string{"a.com"}, Location: &UserLocation{City: "Paris", Timezone: "Europe/Paris"}}},
			&ToolChoice{Mode: ToolChoiceTool, Name: "web_search"}},
		{"anthropic web fetch", ProtocolAnthropic,
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"}],
			"tools":[{"name":"f","input_schema":{"type":"object"}},{"type":"web_fetch_20250910","name":"web_fetch","blocked_domains":["b.com"],"citations":{"enabled":true},"max_content_tokens":900}]}`,
			[]ServerTool{{Kind: ServerWebFetch, Type: "web_fetch_20250910", Param: "tools.1", BlockedDomains: []string{"b.com"}, MaxContentTokens: 900, Citations: ptr(true)}},
			nil},
		{"responses web search", ProtocolOpenAIResponses,
			`{"model":"m","input":"q","tool_choice":{"type":"web_search_preview"},"tools":[{"type":"web_search_preview","filters":{"allowed_domains":["go.dev"]},"user_location":{"type":"approximate","country":"FR"},"search_context_size":"low"}]}`,
			[]ServerTool{{Kind: ServerWebSearch, Type: "web_search_preview", Param: "tools[0]", AllowedDomains: []string{"go.dev"}, Location: &UserLocation{Country: "FR"}, ContextSize: "low"}},
			&ToolChoice{Mode: ToolChoiceTool, Name: "web_search"}},
		{"gemini google search and url context", ProtocolGemini,
			`{"contents":[{"role":"user","parts":[{"text":"q"}]}],"tools":[{"google_search":{}},{"urlContext":{}}]}`,
			[]ServerTool{{Kind: ServerWebSearch, Type: "google_search", Param: "tools.google_search"}, {Kind: ServerWebFetch, Type: "url_context", Param: "tools.urlContext"}},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := Lookup(tt.p)
			req, err := c.DecodeRequest([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(req.ServerTools, tt.want) {
				t.Errorf("ServerTools\n got %+v\nwant %+v", req.ServerTools, tt.want)
			}
			if tt.choice != nil && !reflect.DeepEqual(req.ToolChoice, tt.choice) {
				t.Errorf("ToolChoice %+v, want %+v", req.ToolChoice, tt.choice)
			}
			for _, d := range req.Dropped {
				if strings.Contains(d, "web_search") || strings.Contains(d, "google") || strings.Contains(d, "url") || strings.Contains(d, "web_fetch") {
					t.Errorf("server tool dropped: %s", d)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestServerToolsEncode writes the IR's server tools in each backend
// protocol, with what each cannot carry recorded.
func TestServerToolsEncode(t *testing.T) {
	search := ServerTool{Kind: ServerWebSearch, Type: "web_search_20250305", Param: "tools.0", MaxUses: 2,
		AllowedDomains: []string{"a.com"}, BlockedDomains: []string{"b.com"}, Location: &UserLocation{City: "Paris", Country: "FR"}, ContextSize: "high"}
	fetch := ServerTool{Kind: ServerWebFetch, Type: "url_context", Param: "tools.urlContext", MaxContentTokens: 100, Citations: ptr(false)}
	tests := []struct {
		name    string
		p       Protocol
		tools   []ServerTool
		choice  *ToolChoice
		checks  map[string]string // gjson path → raw JSON wanted
		dropped []string          // prefixes of drop entries wanted
	}{
		{"anthropic", ProtocolAnthropic, []ServerTool{search, fetch}, &ToolChoice{Mode: ToolChoiceTool, Name: "web_search"}, map[string]string{
			"tools.#": "2", "tools.0.type": `"web_search_20250305"`, "tools.0.name": `"web_search"`, "tools.0.max_uses": "2",
			"tools.0.allowed_domains": `["a.com"]`, "tools.0.blocked_domains": "", "tools.0.user_location": `{"type":"approximate","city":"Paris","country":"FR"}`,
			"tools.1.type": `"web_fetch_20250910"`, "tools.1.name": `"web_fetch"`, "tools.1.max_content_tokens": "100", "tools.1.citations": `{"enabled":false}`,
			"tool_choice": `{"type":"tool","name":"web_search"}`,
		}, []string{"tools.blocked_domains: ", "tools.search_context_size: "}},
		{"responses", ProtocolOpenAIResponses, []ServerTool{search}, &ToolChoice{Mode: ToolChoiceTool, Name: "web_search"}, map[string]string{
			"tools.#": "1", "tools.0": `{"type":"web_search","filters":{"allowed_domains":["a.com"]},"user_location":{"type":"approximate","city":"Paris","country":"FR"},"search_context_size":"high"}`,
			"tool_choice": `"required"`,
		}, []string{"tools.blocked_domains: ", "tools.max_uses: "}},
		{"gemini", ProtocolGemini, []ServerTool{search, fetch}, &ToolChoice{Mode: ToolChoiceTool, Name: "web_search"}, map[string]string{
			"tools": `[{"googleSearch":{}},{"urlContext":{}}]`, "toolConfig": "",
		}, []string{"tools.max_uses: ", "tools.allowed_domains: ", "tools.user_location: ", "tools.blocked_domains: ", "tool_choice: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := Lookup(tt.p)
			req := &Request{Model: "m", MaxTokens: 100, Messages: []Message{{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "q"}}}},
				ServerTools: tt.tools, ToolChoice: tt.choice}
			body, err := c.EncodeRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			for path, want := range tt.checks {
				if got := gjson.GetBytes(body, path).Raw; got != want {
					t.Errorf("%s = %s, want %s\nbody %s", path, got, want, body)
				}
			}
			for _, want := range tt.dropped {
				found := false
				for _, d := range req.Dropped {
					found = found || strings.HasPrefix(d, want)
				}
				if !found {
					t.Errorf("no drop %q in %q", want, req.Dropped)
				}
			}
		})
	}
}

// TestServerToolPolicy: a backend without the tool refuses or drops it as
// the policy says; one with it keeps it.
func TestServerToolPolicy(t *testing.T) {
	forced := &ToolChoice{Mode: ToolChoiceTool, Name: "web_search"}
	tests := []struct {
		name     string
		backend  Protocol
		policy   ServerToolPolicy
		choice   *ToolChoice
		wantErr  bool
		wantKept int
		wantAuto bool
	}{
		{"runs it", ProtocolGemini, ServerToolsReject, forced, false, 1, false},
		{"auto, offered", ProtocolOpenAIChat, ServerToolsAuto, nil, false, 0, false},
		{"auto, forced", ProtocolOpenAIChat, ServerToolsAuto, forced, true, 0, false},
		{"reject, offered", ProtocolOpenAIChat, ServerToolsReject, nil, true, 0, false},
		{"drop, forced", ProtocolOpenAIChat, ServerToolsDrop, forced, false, 0, true},
		{"bedrock", ProtocolBedrock, ServerToolsAuto, forced, true, 0, false},
		{"none: a self-hosted Responses server, offered", ProtocolOpenAIResponses, ServerToolsNone, nil, false, 0, false},
		{"none: a self-hosted Responses server, forced", ProtocolOpenAIResponses, ServerToolsNone, forced, true, 0, false},
		{"vertex claude", ProtocolVertexAnthropic, ServerToolsAuto, nil, false, 0, false},
		{"vertex gemini has search", ProtocolVertexGemini, ServerToolsAuto, forced, false, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &Request{ServerTools: []ServerTool{{Kind: ServerWebSearch, Type: "web_search", Param: "tools[3]"}}, ToolChoice: tt.choice}
			err := applyServerToolPolicy(req, tt.backend, tt.policy)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want one: %v", err, tt.wantErr)
			}
			if err != nil {
				if err.Status != 400 || err.Param != "tools[3]" || !strings.Contains(err.Message, "web_search") {
					t.Errorf("error %+v", err)
				}
				return
			}
			if len(req.ServerTools) != tt.wantKept {
				t.Errorf("kept %d", len(req.ServerTools))
			}
			if tt.wantKept == 0 && len(req.Dropped) == 0 {
				t.Error("the drop is not recorded")
			}
			if tt.wantAuto && (req.ToolChoice == nil || req.ToolChoice.Mode != ToolChoiceAuto) {
				t.Errorf("tool choice %+v, want auto", req.ToolChoice)
			}
		})
	}
}

// TestServerToolsRoundTrip: Anthropic → Responses → Anthropic keeps what
// both protocols can say.
func TestServerToolsRoundTrip(t *testing.T) {
	body := `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"}],
		"tools":[{"type":"web_search_20250305","name":"web_search","allowed_domains":["a.com"],"user_location":{"type":"approximate","region":"IDF"}}]}`
	anth, _ := Lookup(ProtocolAnthropic)
	resp, _ := Lookup(ProtocolOpenAIResponses)
	req, err := anth.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	mid, err := resp.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	back, err := resp.DecodeRequest(mid)
	if err != nil {
		t.Fatal(err)
	}
	out, err := anth.EncodeRequest(back)
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(out, "tools").Raw; got != `[{"type":"web_search_20250305","name":"web_search","allowed_domains":["a.com"],"user_location":{"type":"approximate","region":"IDF"}}]` {
		t.Errorf("round trip: %s", got)
	}
}

// TestServerToolExtrasDropped: what a translated Anthropic server tool
// leaves out is recorded.
func TestServerToolExtrasDropped(t *testing.T) {
	c, _ := Lookup(ProtocolAnthropic)
	req, err := c.DecodeRequest([]byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"}],
		"tools":[{"type":"web_search_20250305","name":"web_search","cache_control":{"type":"ephemeral"},"search_profile":"deep"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"tools.cache_control: not translated for a server tool", "tools.search_profile: not translated for a server tool"}
	if !reflect.DeepEqual(req.Dropped, want) || len(req.ServerTools) != 1 {
		t.Errorf("Dropped %q, ServerTools %+v", req.Dropped, req.ServerTools)
	}
}
