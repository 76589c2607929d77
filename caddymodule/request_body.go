package caddymodule

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/louter/louter/translate"
)

// readBody reads the request body, refusing more than max_request_body
// bytes and compressed bodies (the model inside must be readable).
func (l *Louter) readBody(r *http.Request) ([]byte, *translate.Error) {
	return readBodyUpTo(r, l.MaxRequestBody, "request body")
}

// readBodyUpTo reads the request body, refusing more than limit bytes
// (what names the body in the refusal) and compressed bodies.
func readBodyUpTo(r *http.Request, limit int64, what string) ([]byte, *translate.Error) {
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return nil, translate.NewError(http.StatusUnsupportedMediaType, fmt.Sprintf("louter: compressed request bodies (Content-Encoding: %s) are not supported", ce))
	}
	// Made only when needed: formatting it costs an allocation or two on
	// every request.
	tooLarge := func() *translate.Error {
		return translate.NewError(http.StatusRequestEntityTooLarge, fmt.Sprintf("louter: the %s exceeds %d bytes", what, limit))
	}
	if r.ContentLength > limit {
		return nil, tooLarge()
	}
	if r.Body == nil {
		return nil, nil
	}
	hint := 512
	if r.ContentLength > 0 {
		hint = int(r.ContentLength) + 1 // +1: room for the read that sees EOF
	}
	body, err := readAll(io.LimitReader(r.Body, limit+1), hint)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, tooLarge() // request_body's max_size
		}
		return nil, bodyReadError(err)
	}
	if int64(len(body)) > limit {
		return nil, tooLarge()
	}
	return body, nil
}

// bodyReadError is the answer to a request body that could not be read.
// The read error itself names the connection's addresses, so it is not
// repeated: a deadline (the server's read_body timeout against a client
// that trickles its body) is a 408, anything else a 400.
func bodyReadError(err error) *translate.Error {
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return translate.NewError(http.StatusRequestTimeout, "louter: the request body was not received in time")
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return translate.BadRequest("louter: the request body ended before it was complete")
	}
	return translate.BadRequest("louter: the request body could not be read")
}

// readAll is io.ReadAll starting from a buffer of the expected size, so a
// body with a Content-Length is read without regrowing.
func readAll(r io.Reader, hint int) ([]byte, error) {
	b := make([]byte, 0, hint)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				return b, nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // let append pick the next capacity
		}
	}
}
