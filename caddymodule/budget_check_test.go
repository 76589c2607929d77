package caddymodule

import (
	"context"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestGlobsOverlap(t *testing.T) {
	for _, tt := range []struct {
		p, q string
		want bool
	}{
		{"gpt-*", "gpt-*", true},
		{"gpt-*", "gpt-4o", true},
		{"*-mini", "gpt-*", true}, // gpt-4o-mini
		{"claude-*", "gpt-*", false},
		{"gpt-4o", "gpt-4o-mini", false},
		{"a*b", "*c", false},
		{"a*b*c", "*b*", true},
		{"*", "", true},
		{"x", "", false},
		{"", "", true},
	} {
		if got := globsOverlap(tt.p, tt.q); got != tt.want {
			t.Errorf("globsOverlap(%q, %q) = %v, want %v", tt.p, tt.q, got, tt.want)
		}
		if got := globsOverlap(tt.q, tt.p); got != tt.want {
			t.Errorf("globsOverlap(%q, %q) = %v, want %v", tt.q, tt.p, got, tt.want)
		}
	}
}

// A budget that no price line can charge never triggers: `caddy louter
// check` and the provisioned handler say so, naming the client or route.
func TestUnpricedBudgets(t *testing.T) {
	budget := func(s string) Limits { return Limits{Budget: s} }
	routes := []ModelRoute{
		{Match: "claude-*", Backend: "anth"},
		{Match: "gpt-*", Backend: "oai"},
		{Match: "fast", Backend: "oai", Rename: "gpt-4o-mini", Limits: &Limits{Budget: "1usd/1d"}},
	}
	for _, tt := range []struct {
		name    string
		clients []*ClientKey
		routes  []ModelRoute
		prices  []ModelPrice
		want    []string // substrings, one line each
	}{
		{"no price at all", []*ClientKey{{Name: "alice", Limits: budget("0.0005usd/1d")}}, routes[:2], nil,
			[]string{`client "alice": budget 0.0005usd/1d never triggers: no price line is configured`}},
		{"no price for the client's models", []*ClientKey{{Name: "alice", Models: []string{"claude-*"}, Limits: budget("5usd/1d")}}, routes[:2],
			[]ModelPrice{{Match: "gpt-*", Input: 1, Output: 1}},
			[]string{`client "alice": budget 5usd/1d never triggers: no price line matches the models of its routes (claude-*)`}},
		{"a price overlapping a route", []*ClientKey{{Name: "alice", Models: []string{"gpt-*"}, Limits: budget("5usd/1d")}}, routes[:2],
			[]ModelPrice{{Match: "*-mini", Input: 1, Output: 1}}, nil},
		{"a zero price charges nothing", []*ClientKey{{Name: "alice", Limits: budget("5usd/1d")}}, routes[:2],
			[]ModelPrice{{Match: "*"}},
			[]string{`client "alice": budget 5usd/1d never triggers: no price line matches the models of its routes (claude-*, gpt-*)`}},
		{"a route's budget priced by its rename", nil, routes, []ModelPrice{{Match: "gpt-4o-*", Input: 1}}, nil},
		{"a route's budget unpriced", nil, routes, []ModelPrice{{Match: "claude-*", Input: 1}},
			[]string{`model route "fast": budget 1usd/1d never triggers: no price line matches the models of its routes (fast)`}},
		{"a client that reaches no route", []*ClientKey{{Name: "alice", Models: []string{"llama*"}, Limits: budget("5usd/1d")}}, routes[:2], nil, nil},
		{"no budget", []*ClientKey{{Name: "alice"}}, routes[:2], nil, nil},
	} {
		got := unpricedBudgets(tt.clients, tt.routes, tt.prices)
		if len(got) != len(tt.want) {
			t.Errorf("%s: %q, want %d lines", tt.name, got, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: line %d %q, want it to contain %q", tt.name, i, got[i], w)
			}
		}
	}

	// `caddy louter check` reports it.
	cfg := `{"apps": {"http": {"servers": {"s": {"routes": [{"handle": [{"handler": "louter",
		"backends": {"m": {"protocol": "openai_chat", "upstream": {"handler": "reverse_proxy"}}},
		"clients": [{"name": "alice", "key_sha256": "` + sha256HexForTest("k") + `", "budget": "0.0005usd/1d"}],
		"models": [{"match": "gpt-*", "backend": "m"}]}]}]}}}}}`
	problems, err := CheckConfig([]byte(cfg))
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0], `client "alice": budget 0.0005usd/1d never triggers`) {
		t.Errorf("check: %v %q", err, problems)
	}

	// So does the handler when it is provisioned, as a warning.
	core, logs := observer.New(zapcore.WarnLevel)
	l := &Louter{
		Backends:     map[string]*Backend{"oai": {Protocol: "openai_chat"}},
		Models:       routes[1:2],
		ClientAccess: ClientAccess{Clients: []*ClientKey{{Name: "alice", KeySHA256: sha256HexForTest("k"), Limits: budget("5usd/1d")}}},
		logger:       zap.New(core),
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := l.provisionAccess(ctx); err != nil {
		t.Fatal(err)
	}
	if w := logs.FilterMessageSnippet(`client "alice": budget 5usd/1d never triggers`).Len(); w != 1 {
		t.Errorf("%d warnings at provision, want 1: %v", w, logs.All())
	}
}
