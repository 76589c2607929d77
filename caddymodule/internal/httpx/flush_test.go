package httpx

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// plainWriter can neither flush nor unwrap.
type plainWriter struct{ http.ResponseWriter }

// flushErrWriter flushes with an error, and has Flush too, which
// FlushError must be preferred to (as http.ResponseController does).
type flushErrWriter struct {
	http.ResponseWriter
	errs, flushes int
}

var errFlushTest = errors.New("flush failed")

func (f *flushErrWriter) FlushError() error { f.errs++; return errFlushTest }
func (f *flushErrWriter) Flush()            { f.flushes++ }

// TestFlusherMatchesResponseController checks that the flusher
// resolved once when a wrapper is made flushes the same writer, with the
// same error, as http.ResponseController resolving it on every flush.
func TestFlusherMatchesResponseController(t *testing.T) {
	wrap := func(w http.ResponseWriter) http.ResponseWriter {
		return &caddyhttp.ResponseWriterWrapper{ResponseWriter: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w}}
	}
	for _, tt := range []struct {
		name    string
		bottom  func() (http.ResponseWriter, func() int)
		wantErr error
	}{
		{"Flush beneath two wrappers", func() (http.ResponseWriter, func() int) {
			rec := httptest.NewRecorder()
			return rec, func() int {
				if rec.Flushed {
					return 1
				}
				return 0
			}
		}, nil},
		{"FlushError preferred", func() (http.ResponseWriter, func() int) {
			f := &flushErrWriter{ResponseWriter: httptest.NewRecorder()}
			return f, func() int { return f.errs*10 + f.flushes }
		}, errFlushTest},
		{"no flusher", func() (http.ResponseWriter, func() int) {
			return plainWriter{httptest.NewRecorder()}, func() int { return 0 }
		}, http.ErrNotSupported},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bottom, count := tt.bottom()
			cf := NewFlusher(wrap(bottom))
			err := cf.Flush()
			got := count()
			rcBottom, rcCount := tt.bottom()
			rcErr := http.NewResponseController(wrap(rcBottom)).Flush()
			if !errors.Is(err, tt.wantErr) || (err == nil) != (rcErr == nil) || !errors.Is(rcErr, tt.wantErr) {
				t.Fatalf("error %v, ResponseController's %v, want %v", err, rcErr, tt.wantErr)
			}
			if want := rcCount(); got != want {
				t.Fatalf("flushed %d, ResponseController %d", got, want)
			}
		})
	}
}
