package caddymodule

import (
	"github.com/louter/louter/translate"
)

// A request passed on untranslated gets the backend's answer byte for byte,
// errors included, with one exception: a context overflow in words the
// client's agent does not know. An OpenAI Chat client of llama.cpp or vLLM
// gets their own error shapes, without the context_length_exceeded code
// Codex and the OpenAI SDKs look for, so it would not compact. Error bodies
// of a passthrough response are therefore held (they are small) until the
// end, and an overflow is reworded in the client's protocol; every other
// error goes on as it came.

// bufferPassError holds a chunk of a passthrough error body. A body larger
// than maxErrorBody is no error worth rewording: it goes on as it is.
func (rw *responseWriter) bufferPassError(p []byte) (int, error) {
	if len(rw.buf)+len(p) <= maxErrorBody {
		rw.buf = append(rw.buf, p...)
		return len(p), nil
	}
	rw.mode = modePass
	rw.commit(rw.status)
	if _, err := rw.writeClient(rw.buf); err != nil {
		return 0, err
	}
	rw.buf = nil
	return rw.writeClient(p)
}

// finishPassError answers a held passthrough error: reworded when it is an
// overflow the client would not recognise, as it came otherwise.
func (rw *responseWriter) finishPassError() {
	if e := rw.backend.codec.DecodeError(rw.status, rw.buf); e.Kind == translate.ErrContextOverflow && !e.OverflowWordedFor(rw.client.Protocol()) {
		rw.respondError(e)
		return
	}
	rw.commit(rw.status)
	rw.writeClient(rw.buf) //nolint:errcheck // a client that has gone needs no answer
	rw.copyTrailers()
}
