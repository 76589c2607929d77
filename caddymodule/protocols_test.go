package caddymodule

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/louter/louter/caddymodule/internal/redact"
	"github.com/louter/louter/translate"
)

// TestProtocolRows checks what the rows must agree on with each other and
// with the rest of the package.
func TestProtocolRows(t *testing.T) {
	defaults := 0
	for _, row := range protocolRows {
		p := row.protocol
		if _, ok := translate.Lookup(p); !ok {
			t.Errorf("%s: a row without a codec", p)
		}
		if row.endpoint != nil && row.setKey == nil {
			t.Errorf("%s: a backend protocol must say where its key goes (setKey)", p)
		}
		for h := range row.passAuthHeaders {
			if !redact.IsCredentialHeader(h) {
				// Only credential headers are taken off a request and
				// scrubbed from errors.
				t.Errorf("%s: pass_client_auth header %s is not a credential header (redact)", p, h)
			}
		}
		for h := range row.ownHeaders {
			if redact.IsCredentialHeader(h) {
				t.Errorf("%s: own header %s is a credential", p, h)
			}
		}
		if row.v1Default {
			defaults++
		}
	}
	if defaults != 1 {
		t.Errorf("%d rows are the /v1 namespace's default, want 1", defaults)
	}
}

// TestNoProtocolNamedOutsideRows keeps the protocols' names in their rows:
// no production file of the package but protocols.go and a protocol's own
// file names a protocol, so a new protocol needs no edit anywhere else.
func TestNoProtocolNamedOutsideRows(t *testing.T) {
	// gemini.go, interactions.go, bedrock.go, vertex.go and azure.go are
	// protocols' own files (their rows and what is too big for a row).
	allowed := map[string]bool{"protocols.go": true, "gemini.go": true, "interactions.go": true, "bedrock.go": true, "vertex.go": true, "azure.go": true}
	names := map[string]bool{}
	for _, p := range []translate.Protocol{translate.ProtocolAnthropic, translate.ProtocolOpenAIChat, translate.ProtocolOpenAIResponses, translate.ProtocolGemini, translate.ProtocolGeminiInteractions, translate.ProtocolBedrock, translate.ProtocolBedrockConverse} {
		names[string(p)] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || allowed[name] {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "translate" && strings.HasPrefix(n.Sel.Name, "Protocol") && n.Sel.Name != "Protocol" {
					t.Errorf("%s: names translate.%s; read the protocol's row (protocols.go)", fset.Position(n.Pos()), n.Sel.Name)
				}
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil && names[s] {
					t.Errorf("%s: names protocol %q; read the protocol's row (protocols.go)", fset.Position(n.Pos()), s)
				}
			}
			return true
		})
	}
}
