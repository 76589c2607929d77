package readme

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// pendingPages are pages the README's index links that other branches are
// writing while this test is added. A link to one passes while the page is
// missing and is checked like any other once it exists; drop a name from
// this list when its page is merged.
var pendingPages = map[string]bool{}

var (
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	mdHeading  = regexp.MustCompile(`^#{1,6} (.+)$`)
	fenceStart = regexp.MustCompile("^```")
)

// outsideFences returns the lines of a Markdown file, those of fenced
// blocks blanked.
func outsideFences(text string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		if fenceStart.MatchString(l) {
			in = !in
			out = append(out, "")
			continue
		}
		if in {
			l = ""
		}
		out = append(out, l)
	}
	return out
}

// prose is outsideFences with code spans blanked too: a link inside either
// is an example, not a link.
func prose(text string) []string {
	out := outsideFences(text)
	for i, l := range out {
		out[i] = codeSpan.ReplaceAllString(l, "``")
	}
	return out
}

// anchors are the fragment names GitHub gives a Markdown file's headings:
// lower case, punctuation other than '-' and '_' dropped, spaces made
// hyphens, a repeated name suffixed -1, -2, ...
func anchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range outsideFences(text) {
		m := mdHeading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		s := b.String()
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// TestDocLinks: every relative link of README.md and docs/*.md names a file
// of the repository, and its #fragment, if any, a heading of that file.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	read := func(rel string) (string, bool) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		return string(b), err == nil
	}
	n := 0
	for _, file := range docFiles(t) {
		text, _ := read(file)
		for i, l := range prose(text) {
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				n++
				where := fmt.Sprintf("%s:%d", file, i+1)
				p, frag, _ := strings.Cut(target, "#")
				rel := file
				if p != "" {
					rel = path.Clean(path.Join(path.Dir(file), p))
				}
				body, ok := read(rel)
				if !ok {
					if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
						ok = true // a folder
					}
				}
				switch {
				case !ok && pendingPages[rel]:
					continue
				case !ok:
					t.Errorf("%s: link %s: no file %s", where, target, rel)
				case frag != "" && !anchors(body)[frag]:
					t.Errorf("%s: link %s: %s has no heading #%s", where, target, rel, frag)
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d relative links found; the docs were not read as expected", n)
	}
}

// TestAnchors pins the heading-to-fragment rule TestDocLinks relies on.
func TestAnchors(t *testing.T) {
	got := anchors("# Client keys and limits\n## Tracing (OpenTelemetry)\n## `louter` check\n## A\n## A\n```\n# not a heading\n```\n")
	for _, want := range []string{"client-keys-and-limits", "tracing-opentelemetry", "louter-check", "a", "a-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a line in a fenced block made an anchor")
	}
}
