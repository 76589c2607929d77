package buildscript

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// xcaddyModule is the xcaddy the test installs from the module proxy: the
// version the README's build instructions were checked with.
const xcaddyModule = "github.com/caddyserver/xcaddy/cmd/xcaddy@v0.4.5"

// buildTestEnv opts in: each build compiles Caddy, minutes on a cold cache,
// so `go test ./...` skips this test and .ci/run runs it on its own.
const buildTestEnv = "LOUTER_BUILD_TEST"

// TestXcaddyScript builds Caddy through xcaddy.sh once with xcaddy on the
// PATH and once without, and checks each binary holds louter's modules and
// the Caddy version go.mod pins.
func TestXcaddyScript(t *testing.T) {
	if os.Getenv(buildTestEnv) != "1" {
		t.Skipf("builds Caddy twice through xcaddy.sh (minutes on a cold cache); set %s=1 to run it, as .ci/run does", buildTestEnv)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	caddyVersion := requiredVersion(t, filepath.Join(root, "go.mod"), "github.com/caddyserver/caddy/v2")
	for _, tc := range []struct {
		name   string
		xcaddy bool
	}{
		{"without xcaddy", false},
		{"with xcaddy", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := pathWithout(os.Getenv("PATH"), "xcaddy")
			if tc.xcaddy {
				path = installXcaddy(t) + string(os.PathListSeparator) + path
			}
			out := filepath.Join(t.TempDir(), "caddy")
			cmd := exec.Command(filepath.Join(root, "xcaddy.sh"), "build")
			cmd.Env = append(envWithout(os.Environ(), "PATH", "OUT", "NO_XCADDY", "RACE"), "PATH="+path, "OUT="+out)
			log, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("xcaddy.sh build: %v\n%s", err, log)
			}
			if !strings.Contains(string(log), "the first build downloads the modules and compiles Caddy (5-25 minutes") {
				t.Errorf("no word about how long the first build takes:\n%s", log)
			}
			// Without xcaddy the script counts what go build -v names: a
			// cold build's count ends in "linking", a warm one says 0.
			if !tc.xcaddy && !regexp.MustCompile(`(?m)^xcaddy\.sh: compiled [0-9]+ packages(, linking| \(the build cache holds them all\))`).Match(log) {
				t.Errorf("no progress line from the build:\n%s", log)
			}
			// xcaddy logs its steps; the go command alone does not.
			if usedXcaddy := strings.Contains(string(log), "[INFO] Build environment ready"); usedXcaddy != tc.xcaddy {
				t.Errorf("xcaddy used: %v, want %v:\n%s", usedXcaddy, tc.xcaddy, log)
			}
			modules := run(t, out, "list-modules")
			for _, m := range []string{"http.handlers.louter", "http.handlers.louter_mock", "http.handlers.reverse_proxy"} {
				if !hasLine(modules, m) {
					t.Errorf("module %s missing from list-modules:\n%s", m, modules)
				}
			}
			if v := run(t, out, "version"); !strings.HasPrefix(v, caddyVersion+" ") {
				t.Errorf("caddy version = %q, want %s as go.mod pins", v, caddyVersion)
			}
		})
	}
}

// installXcaddy installs xcaddy from the module proxy into a temporary
// folder and returns it, or skips the test when the proxy is unreachable.
func installXcaddy(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	cmd := exec.Command("go", "install", xcaddyModule)
	cmd.Env = append(envWithout(os.Environ(), "GOBIN"), "GOBIN="+bin)
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("cannot install %s from the module proxy, so the xcaddy path is untested: %v\n%s", xcaddyModule, err, log)
	}
	return bin
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	b, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, b)
	}
	return string(b)
}

func hasLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// pathWithout drops from a PATH list the folders that hold an executable
// named name.
func pathWithout(path, name string) string {
	var keep []string
	for _, dir := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && !fi.IsDir() {
			continue
		}
		keep = append(keep, dir)
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

func envWithout(env []string, names ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// requiredVersion reads the version of module required in a go.mod.
func requiredVersion(t *testing.T, gomod, module string) string {
	t.Helper()
	f, err := os.Open(gomod)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(s.Text()), "require "))
		if len(fields) >= 2 && fields[0] == module {
			return fields[1]
		}
	}
	t.Fatalf("%s requires no %s", gomod, module)
	return ""
}
