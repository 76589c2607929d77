package tokencount

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/louter/louter/translate"
)

// framingName names the providers' framings in test messages.
func framingName(f *Framing) string {
	switch f {
	case OpenAI:
		return "OpenAI"
	case Anthropic:
		return "Anthropic"
	case Gemini:
		return "Gemini"
	case nil:
		return "nil"
	}
	return "custom"
}

// TestCallersFraming: a framing the caller describes is the one counted,
// by every counter: its constants, its image and PDF rules, and its
// vocabulary for the model asked.
func TestCallersFraming(t *testing.T) {
	var gotDetail, gotModel string
	var gotW, gotH int
	f := &Framing{
		Request: 1000, Message: 100, Tool: 10, ToolsPrompt: 5000, ToolCall: 7, ToolResult: 9,
		Image: func(w, h int, detail string) int {
			gotW, gotH, gotDetail = w, h, detail
			return 42
		},
		PDFPage: 11,
		Encoding: func(model string) Encoding {
			gotModel = model
			return Cl100kBase
		},
	}
	// Every text is empty, so the count is the framing's alone.
	req := &translate.Request{
		System: []translate.Part{{Type: translate.PartText}},
		Tools:  []translate.Tool{{}},
		Messages: []translate.Message{
			{Role: translate.RoleUser, Parts: []translate.Part{
				{Type: translate.PartImage, Media: &translate.Media{URL: "https://example.com/a.png", Detail: "low"}},
				{Type: translate.PartDocument, Media: &translate.Media{MediaType: "application/pdf"}},
			}},
			{Role: translate.RoleAssistant, Parts: []translate.Part{{Type: translate.PartToolCall, ToolCall: &translate.ToolCall{}}}},
			{Role: translate.RoleUser, Parts: []translate.Part{{Type: translate.PartToolResult, ToolResult: &translate.ToolResult{}}}},
		},
	}
	const want = 1000 + 100 + 5000 + 10 + 3*100 + 42 + 11 + 7 + 9
	for name, count := range map[string]func() int{
		"Count":    func() int { return Count(req, f, "m") },
		"Estimate": func() int { return Estimate(req, f) },
		"Quick":    func() int { return Quick(req, f) },
	} {
		gotDetail, gotW, gotH = "", 0, 0
		if got := count(); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
		if gotW != defaultSide || gotH != defaultSide || gotDetail != "low" {
			t.Errorf("%s: the image rule was asked for %d×%d %q, want %d×%d \"low\"", name, gotW, gotH, gotDetail, defaultSide, defaultSide)
		}
	}
	if got := ImageTokens(10, 20, f, "high"); got != 42 || gotW != 10 || gotH != 20 || gotDetail != "high" {
		t.Errorf("ImageTokens = %d for %d×%d %q, want 42 for 10×20 \"high\"", got, gotW, gotH, gotDetail)
	}

	text := "Привет, как дела?" // 8 tokens in cl100k_base, 6 in o200k_base
	one := &translate.Request{Messages: []translate.Message{{Role: translate.RoleUser, Parts: []translate.Part{{Type: translate.PartText, Text: text}}}}}
	if got, want := Count(one, f, "my-model"), 1000+100+CountText(text, Cl100kBase); got != want || gotModel != "my-model" {
		t.Errorf("Count = %d with the vocabulary for %q, want %d (cl100k_base, for \"my-model\")", got, gotModel, want)
	}
	if CountText(text, Cl100kBase) == CountText(text, O200kBase) {
		t.Fatalf("%q counts alike in both vocabularies: pick a text that tells them apart", text)
	}
}

// TestZeroFraming: a framing's zero fields add nothing, and its nil
// Encoding is o200k_base.
func TestZeroFraming(t *testing.T) {
	text := "antidisestablishmentarianism"
	req := &translate.Request{Messages: []translate.Message{{Role: translate.RoleUser, Parts: []translate.Part{
		{Type: translate.PartText, Text: text},
		{Type: translate.PartImage, Media: &translate.Media{URL: "https://example.com/a.png"}},
		{Type: translate.PartDocument, Media: &translate.Media{MediaType: "application/pdf"}},
	}}}}
	if got, want := Count(req, &Framing{}, "gpt-4"), CountText(text, O200kBase); got != want {
		t.Errorf("Count with a zero framing = %d, want %d (the text alone, in o200k_base)", got, want)
	}
}

// TestNilFramingIsOpenAI: a caller with no framing (a backend protocol
// whose row has none) counts as OpenAI's API.
func TestNilFramingIsOpenAI(t *testing.T) {
	files := loadCorpus(t)
	req := files[len(files)-1].req
	img := &translate.Request{Messages: []translate.Message{{Role: translate.RoleUser, Parts: []translate.Part{
		{Type: translate.PartImage, Media: &translate.Media{URL: "https://example.com/a.png"}},
		{Type: translate.PartDocument, Media: &translate.Media{MediaType: "application/pdf"}},
	}}}}
	for _, r := range []*translate.Request{req, img} {
		for _, model := range []string{"gpt-4", "gpt-5"} {
			if got, want := Count(r, nil, model), Count(r, OpenAI, model); got != want {
				t.Errorf("Count(nil, %s) = %d, OpenAI's %d", model, got, want)
			}
		}
		if got, want := Estimate(r, nil), Estimate(r, OpenAI); got != want {
			t.Errorf("Estimate(nil) = %d, OpenAI's %d", got, want)
		}
		if got, want := Quick(r, nil), Quick(r, OpenAI); got != want {
			t.Errorf("Quick(nil) = %d, OpenAI's %d", got, want)
		}
	}
	if got, want := ImageTokens(1024, 1024, nil, ""), ImageTokens(1024, 1024, OpenAI, ""); got != want {
		t.Errorf("ImageTokens(nil) = %d, OpenAI's %d", got, want)
	}
}

// TestNoProtocolNamed keeps the package free of protocol names: which
// framing a backend protocol has is its caller's to say (caddymodule's
// protocol rows), so a new protocol needs no edit here.
func TestNoProtocolNamed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if s, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := s.X.(*ast.Ident); ok && x.Name == "translate" && strings.HasPrefix(s.Sel.Name, "Protocol") {
					t.Errorf("%s: names translate.%s; take a *Framing instead", fset.Position(s.Pos()), s.Sel.Name)
				}
			}
			return true
		})
	}
}
