// Package archtest holds the tests that keep the module's shape: which
// package may import which, and how big a package or a file may grow. They
// read the source with go/parser, so they need neither a build nor the go
// command.
package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/louter/louter"

// A pkg is one package of the module as its non-test files have it.
type pkg struct {
	dir     string              // slash path from the module root; "" is the root
	imports map[string][]string // import path -> files importing it
	files   int                 // non-test .go files
	lines   int                 // their lines
}

// loadPackages parses the import clause of every .go file under the module
// root, skipping node_modules, testdata and hidden folders, and returns the
// packages by folder along with every file's line count.
func loadPackages(t *testing.T) (map[string]*pkg, map[string]int) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pkgs, lines := map[string]*pkg{}, map[string]int{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines[rel] = strings.Count(string(src), "\n")
		if strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := path.Dir(rel)
		if dir == "." {
			dir = ""
		}
		k := pkgs[dir]
		if k == nil {
			k = &pkg{dir: dir, imports: map[string][]string{}}
			pkgs[dir] = k
		}
		k.files++
		k.lines += lines[rel]
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			k.imports[ip] = append(k.imports[ip], rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs, lines
}

// A layer says what a package may import from the module (folders, each
// allowing itself and the folders below it when it ends in "/...") and
// whether it may import Caddy.
type layer struct {
	may   []string
	caddy bool
}

// library is what the packages usable without a server may import: none of
// them imports Caddy, so translate, stream and the rest stay a library.
var library = layer{may: []string{"translate", "stream", "dialect", "tokencount", "limits", "record", "state", "keys", "internal/jsonwire"}}

// layers is the import rule of every package of the module; a package not
// listed fails the test until it is given its place here. The rule of
// caddymodule's own packages is a DAG with the handler on top:
//
//   - caddymodule (http.handlers.louter) may import every package below it;
//     nothing imports caddymodule but the module's root, cmd/caddy and
//     test helpers.
//   - caddymodule/auth is the public BackendAuth contract; each auth module
//     (auth/awssigv4, auth/azure, auth/google) and the log filter
//     (logfilter) is a Caddy module of its own that imports the contract
//     and redaction only, as reverseproxy/fastcgi imports reverseproxy.
//   - internal/redact (what counts as a secret) imports nothing of louter's;
//     internal/testhook (what tests set in modules of their own packages)
//     nothing either; internal/httpx (the HTTP helpers the handler and
//     the stateful layer share) the translate library only.
//   - internal/stateful (stored responses, their endpoints, compaction,
//     background turns, the Responses WebSocket) is given the handler as
//     a Host at Provision, and may import the library, redaction and
//     httpx: never caddymodule.
var layers = map[string]layer{
	"":                              {may: []string{"caddymodule", "caddymodule/mock"}},
	"cmd/caddy":                     {may: []string{"caddymodule/..."}, caddy: true},
	"caddymodule":                   {may: append([]string{"caddymodule/..."}, library.may...), caddy: true},
	"caddymodule/mock":              {may: library.may, caddy: true},
	"caddymodule/auth":              {caddy: true},
	"caddymodule/auth/awssigv4":     {may: []string{"caddymodule/auth", "caddymodule/internal/redact"}, caddy: true},
	"caddymodule/auth/azure":        {may: []string{"caddymodule/auth", "caddymodule/internal/redact", "caddymodule/internal/testhook"}, caddy: true},
	"caddymodule/auth/google":       {may: []string{"caddymodule/auth", "caddymodule/internal/redact"}, caddy: true},
	"caddymodule/logfilter":         {may: []string{"caddymodule/internal/redact"}, caddy: true},
	"caddymodule/internal/redact":   {},
	"caddymodule/internal/httpx":    {may: []string{"translate"}, caddy: true},
	"caddymodule/internal/stateful": {may: append([]string{"caddymodule/internal/redact", "caddymodule/internal/httpx"}, library.may...), caddy: true},
	"caddymodule/internal/testhook": {},
	"translate":                     {may: []string{"internal/jsonwire"}},
	"stream":                        {may: []string{"translate", "dialect"}},
	"dialect":                       {may: []string{"translate"}},
	"tokencount":                    {may: []string{"translate"}},
	"record":                        {may: []string{"translate", "stream", "tokencount", "internal/jsonwire"}},
	"limits":                        {},
	"state":                         {},
	"keys":                          {},
	"internal/jsonwire":             {},
	"internal/testcaddy":            {may: []string{"caddymodule/...", "internal/loadbench/harness"}, caddy: true},
	"internal/streamtest":           library,
	"internal/loadbench":            {may: append([]string{"internal/loadbench/..."}, library.may...)},
	"internal/loadbench/harness":    {},
	"internal/loadbench/results":    {},
	"internal/perfchart":            {may: []string{"internal/loadbench/results"}},
	"internal/buildscript":          {},
	"internal/cloudmock":            {},
	"internal/edge":                 {},
	"internal/opsui":                {},
	"internal/readme":               {},
	"internal/testredis":            {},
	"internal/archtest":             {},
	"e2e":                           {},
}

func (l layer) allows(dir string) bool {
	for _, m := range l.may {
		if m == dir || strings.HasSuffix(m, "/...") && (dir == strings.TrimSuffix(m, "/...") || strings.HasPrefix(dir, strings.TrimSuffix(m, "..."))) {
			return true
		}
	}
	return false
}

// TestImportLayers: every package imports only what its layer allows, and
// the library packages import no Caddy.
func TestImportLayers(t *testing.T) {
	pkgs, _ := loadPackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("found %d packages; the walk is broken", len(pkgs))
	}
	dirs := make([]string, 0, len(pkgs))
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		l, ok := layers[d]
		if !ok {
			t.Errorf("package %q has no layer: give it one in archtest_test.go's layers, saying what it may import", d)
			continue
		}
		for ip, files := range pkgs[d].imports {
			switch {
			case ip == module || strings.HasPrefix(ip, module+"/"):
				dep := strings.TrimPrefix(strings.TrimPrefix(ip, module), "/")
				if !l.allows(dep) && dep != d {
					t.Errorf("%s imports %s, which its layer does not allow (%s)", d, ip, files[0])
				}
			case strings.HasPrefix(ip, "github.com/caddyserver/"):
				if !l.caddy {
					t.Errorf("%s imports %s: it must stay usable without Caddy (%s)", d, ip, files[0])
				}
			}
		}
	}
}

// TestLayersAllowOnlyKnownPackages keeps the table honest: a layer that
// allows a folder allows a package the table knows.
func TestLayersAllowOnlyKnownPackages(t *testing.T) {
	for d, l := range layers {
		for _, m := range l.may {
			base := strings.TrimSuffix(m, "/...")
			if _, ok := layers[base]; !ok {
				t.Errorf("layer %q allows %q, which is not in the table", d, m)
			}
		}
	}
}

// Size caps: a package past them is hard to hold in one's head, a file past
// them hard to review.
const (
	maxFiles     = 40 // non-test .go files in a package
	maxPkgLines  = 8000
	maxFileLines = 600 // any .go file, tests included
)

// oversized are today's exceptions, each with the ceiling it may not pass:
// they may shrink, never grow, and an entry that no longer needs its
// exception must go. caddymodule is being split into packages (see
// docs/how-it-works.md); translate is the library's one public package.
var oversized = map[string]struct{ files, lines int }{
	"caddymodule": {files: 88, lines: 15800},
	"translate":   {files: 111, lines: 24100},
}

var longFiles = map[string]int{
	"dialect/dialect_decoder_test.go":                  931,
	"translate/openai_chat_dialect_test.go":            729,
	"translate/openai_chat_request_decode_ref_test.go": 681,
	"translate/anthropic_request_decode_ref_test.go":   634,
	"translate/gemini_codec_test.go":                   603,
}

// TestSizes: no package past maxFiles source files or maxPkgLines lines,
// no file past maxFileLines, but for the listed exceptions' ceilings.
func TestSizes(t *testing.T) {
	pkgs, lines := loadPackages(t)
	for d, k := range pkgs {
		cap, ok := oversized[d]
		if !ok {
			cap.files, cap.lines = maxFiles, maxPkgLines
		} else if k.files <= maxFiles && k.lines <= maxPkgLines {
			t.Errorf("package %q is within the caps now (%d files, %d lines): remove its exception", d, k.files, k.lines)
		}
		if k.files > cap.files || k.lines > cap.lines {
			t.Errorf("package %q has %d source files and %d lines, over its cap of %d and %d: split it by responsibility", d, k.files, k.lines, cap.files, cap.lines)
		}
	}
	for d := range oversized {
		if pkgs[d] == nil {
			t.Errorf("oversized lists %q, which is not a package", d)
		}
	}
	for f, n := range lines {
		cap, ok := longFiles[f]
		if !ok {
			cap = maxFileLines
		} else if n <= maxFileLines {
			t.Errorf("%s has %d lines now: remove its exception", f, n)
		}
		if n > cap {
			t.Errorf("%s has %d lines, over its cap of %d: split it", f, n, cap)
		}
	}
	for f := range longFiles {
		if _, ok := lines[f]; !ok {
			t.Errorf("longFiles lists %s, which does not exist", f)
		}
	}
}
