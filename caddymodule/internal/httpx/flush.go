// Package httpx holds the small HTTP helpers that both the handler
// (caddymodule) and its stateful layer (internal/stateful) use: a wrapper's
// flush, a JSON answer or error written whole, and a Caddyfile size
// option's value.
package httpx

import (
	"fmt"
	"net/http"
)

// errFlushNotSupported is what http.ResponseController.Flush returns for
// a writer chain that cannot flush.
var errFlushNotSupported = fmt.Errorf("%w", http.ErrNotSupported)

// Flusher flushes the writer beneath a wrapper as
// http.ResponseController.Flush does (the first writer down the Unwrap
// chain with FlushError, else with Flush), but finds that writer once, when
// the wrapper is made, not on every flush: a stream flushes after every
// event, and each step down the chain is a failed interface assertion or
// two. The chain beneath a wrapper is fixed once the wrapper exists.
type Flusher struct {
	fe interface{ FlushError() error }
	f  http.Flusher
}

// NewFlusher finds the writer beneath w that flushes.
func NewFlusher(w http.ResponseWriter) Flusher {
	for {
		switch t := w.(type) {
		case interface{ FlushError() error }:
			return Flusher{fe: t}
		case http.Flusher:
			return Flusher{f: t}
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return Flusher{}
		}
	}
}

// Flush flushes the writer found, or returns an error wrapping
// http.ErrNotSupported when there was none.
func (c Flusher) Flush() error {
	switch {
	case c.fe != nil:
		return c.fe.FlushError()
	case c.f != nil:
		c.f.Flush()
		return nil
	}
	return errFlushNotSupported
}
