package caddymodule

import (
	"fmt"
	"net/http"
)

// errFlushNotSupported is what http.ResponseController.Flush returns for
// a writer chain that cannot flush.
var errFlushNotSupported = fmt.Errorf("%w", http.ErrNotSupported)

// chainFlusher flushes the writer beneath a wrapper as
// http.ResponseController.Flush does (the first writer down the Unwrap
// chain with FlushError, else with Flush), but finds that writer once, when
// the wrapper is made, not on every flush: a stream flushes after every
// event, and each step down the chain is a failed interface assertion or
// two. The chain beneath a wrapper is fixed once the wrapper exists.
type chainFlusher struct {
	fe interface{ FlushError() error }
	f  http.Flusher
}

func newChainFlusher(w http.ResponseWriter) chainFlusher {
	for {
		switch t := w.(type) {
		case interface{ FlushError() error }:
			return chainFlusher{fe: t}
		case http.Flusher:
			return chainFlusher{f: t}
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return chainFlusher{}
		}
	}
}

func (c chainFlusher) flush() error {
	switch {
	case c.fe != nil:
		return c.fe.FlushError()
	case c.f != nil:
		c.f.Flush()
		return nil
	}
	return errFlushNotSupported
}
