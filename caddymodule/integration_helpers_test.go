package caddymodule_test

// Pieces of the integration tests' Caddyfiles that several tests share.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/louter/louter/internal/cloudmock"
	"github.com/louter/louter/internal/testcaddy"
)

// mockSite is a louter_mock site on addr (a placeholder such as {PORT1})
// named name, with more directives, one a line.
func mockSite(addr, name string, directives ...string) string {
	more := ""
	for _, d := range directives {
		more += "\t\t" + d + "\n"
	}
	return addr + " {\n\tbind 127.0.0.1\n\tlouter_mock {\n\t\tname " + name + "\n" + more + "\t}\n}\n"
}

// vertexBackend is a Vertex AI backend of protocol in cloudmock.Front's
// project and location, its tokens got with the service account key in
// the file creds ({CREDS}; {FOREIGN}: a key the token endpoint does not
// know), in front of the front ({FRONT}).
func vertexBackend(name, protocol, creds string) string {
	return `
		backend ` + name + ` {
			protocol ` + protocol + `
			vertex {
				project test-project
				location us-east5
			}
			auth google {
				credentials_file ` + creds + `
			}
			reverse_proxy {FRONT}
		}`
}

// entraAuth is the auth block of a backend whose tokens come from
// cloudmock's Entra ID authority ({AUTHORITY}), the client secret from
// the environment; more are further directives of the block, one a line.
func entraAuth(more ...string) string {
	return `auth azure {
				tenant_id ` + cloudmock.AzureTenant + `
				client_id ` + cloudmock.AzureClientID + `
				client_secret {env.LOUTER_TEST_AZURE_SECRET}
				authority_host {AUTHORITY}
				disable_instance_discovery` + strings.Join(append([]string{""}, more...), "\n\t\t\t\t") + `
			}`
}

// sigv4Auth is the auth block of the Bedrock tests' backends: SigV4 in
// region with the test's keys from the environment (setBedrockEnv), the
// secret as given.
func sigv4Auth(region, secret string) string {
	return `auth aws_sigv4 {
				region ` + region + `
				access_key_id {env.LOUTER_TEST_AWS_AKID}
				secret_access_key ` + secret + `
				session_token {env.LOUTER_TEST_AWS_TOKEN}
			}`
}

// caddyOutput is where a test's Caddy writes: its debug log (JSON) and
// its recordings.
type caddyOutput struct {
	logFile, recordDir string
}

func newCaddyOutput(t *testing.T) caddyOutput {
	dir := t.TempDir()
	return caddyOutput{logFile: filepath.Join(dir, "caddy.log"), recordDir: filepath.Join(dir, "record")}
}

// options are testcaddy's options that log at DEBUG to the log file.
func (o caddyOutput) options() testcaddy.Options {
	return testcaddy.Options{LogLevel: "DEBUG", LogFile: o.logFile}
}

// assertNoSecrets waits up to 5 s for a recording, then greps Caddy's
// debug log and every recording for the secrets the test used: none may
// show. There must be a log holding reverse_proxy's debug lines (which
// show the headers sent upstream) and a recording, neither empty.
func (o caddyOutput) assertNoSecrets(t *testing.T, secrets ...string) {
	t.Helper()
	files := []string{o.logFile}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if recs, _ := filepath.Glob(filepath.Join(o.recordDir, "*")); len(recs) > 0 {
			break
		}
	}
	_ = filepath.WalkDir(o.recordDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	if len(files) < 2 {
		t.Errorf("no recording in %s", o.recordDir)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			t.Errorf("%s is empty", f)
		}
		if f == o.logFile && !strings.Contains(string(b), "upstream roundtrip") {
			t.Errorf("the log has no reverse_proxy debug lines, which show the headers sent upstream")
		}
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s contains a secret (%.8s…)", filepath.Base(f), s)
			}
		}
	}
}
