// Package streamtest holds what the stream tests of package stream and
// package dialect share: the Memo that lets a split test cut a body at
// every byte for the cost of framing it, the normalization of generated ids
// and timestamps, and the golden files under testdata/golden. It is imported
// by tests only.
package streamtest

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/louter/louter/stream"
)

// SSEFramer and SSEOutput are the framer and output factories a Memo takes
// for server-sent events.
func SSEFramer() stream.Framer { return &stream.SSEParser{} }

// SSEOutput: see SSEFramer.
func SSEOutput() stream.Output { return &stream.SSEOutput{} }

// Ids louter generates (prefix + 24 random hex digits) and timestamps
// differ from run to run; everything else, upstream ids included, must not.
var (
	reGeneratedID = regexp.MustCompile(`(msg_|toolu_|call_|chatcmpl-|resp_|fc_|ctc_|rs_redacted_|rs_|v1_)[0-9a-f]{24}\b`)
	reCreated     = regexp.MustCompile(`"created":\d+`)
	reCreatedAt   = regexp.MustCompile(`"created_at":\d+`)
)

// Normalize blanks what differs from run to run in a client stream: the
// ids louter generates and the timestamps.
func Normalize(b []byte) []byte {
	b = reGeneratedID.ReplaceAll(b, []byte(`${1}GENERATED`))
	b = reCreatedAt.ReplaceAll(b, []byte(`"created_at":0`))
	return reCreated.ReplaceAll(b, []byte(`"created":0`))
}

// Chunks cuts b into pieces of size bytes (the last may be shorter).
func Chunks(b []byte, size int) [][]byte {
	var out [][]byte
	for len(b) > size {
		out = append(out, b[:size])
		b = b[size:]
	}
	return append(out, b)
}

// Golden compares got with the golden file testdata/golden/name of the
// repository, or rewrites the file when update is set (each test package
// has its own -update flag). The calling test must run in a package one
// level below the repository root, as stream and dialect are.
func Golden(t *testing.T, name string, got []byte, update bool) {
	t.Helper()
	path := filepath.Join("..", "testdata", "golden", name)
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file %s: %v (run with -update to create it)", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
