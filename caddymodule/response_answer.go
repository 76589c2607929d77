package caddymodule

import (
	"net/http"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// The answers the responseWriter writes itself — a translated JSON answer,
// an error in the client's protocol, a complete answer as a stream — and
// the headers it sets or removes on the way (response_writer.go holds the
// modes that decide which).

// respondError answers with an error in the client's protocol. The
// upstream's other headers, Retry-After among them, are kept.
func (rw *responseWriter) respondError(e *translate.Error) {
	rw.respondJSON(errorStatus(rw.client, e), rw.client.EncodeError(e))
}

func (rw *responseWriter) respondResponse(resp *translate.Response) {
	body, err := rw.translation().EncodeResponse(resp)
	if err != nil {
		rw.logger.Error("cannot encode the response for the client", zap.String("backend", rw.backend.name), zap.Error(err))
		rw.badResponse = true
		rw.respondError(stream.UntranslatableResponse(err))
		return
	}
	rw.respondJSON(http.StatusOK, body)
}

func (rw *responseWriter) respondJSON(status int, body []byte) {
	stripEntityHeaders(rw.header)
	rw.header.Set("Content-Type", "application/json")
	rw.header.Set("Content-Length", strconv.Itoa(len(body)))
	rw.commit(status)
	rw.writeClient(body) //nolint:errcheck // a client that has gone needs no answer
}

// respondStream answers a stream client with a complete response, as the
// events it is equivalent to.
func (rw *responseWriter) respondStream(resp *translate.Response) {
	rw.out.Reset()
	rw.translation().EncodeStream(rw.out, resp)
	stripEntityHeaders(rw.header)
	rw.setClientStreamHeaders()
	rw.commit(http.StatusOK)
	rw.contentSent()
	rw.writeEnd(rw.out.Bytes())
}

// copyTrailers passes on the trailers the upstream handler set after the
// body (passthrough only; translated bodies drop them).
func (rw *responseWriter) copyTrailers() {
	dst := rw.ResponseWriter.Header()
	declared := rw.header.Values("Trailer")
	for k, v := range rw.header {
		if strings.HasPrefix(k, http.TrailerPrefix) || declaresTrailer(declared, k) {
			dst[k] = v
		}
	}
}

func declaresTrailer(declared []string, key string) bool {
	for _, line := range declared {
		for name := range strings.SplitSeq(line, ",") {
			if http.CanonicalHeaderKey(strings.TrimSpace(name)) == key {
				return true
			}
		}
	}
	return false
}

// stripEntityHeaders removes the headers that describe the upstream's body,
// which a translated body no longer matches.
func stripEntityHeaders(h http.Header) {
	for _, k := range []string{"Content-Length", "Content-Type", "Content-Encoding", "Etag", "Transfer-Encoding", "Last-Modified", "Accept-Ranges", "Trailer"} {
		delete(h, k)
	}
}

// setClientStreamHeaders marks a translated stream for the client: an event
// stream, or JSON for a streamed JSON array.
func (rw *responseWriter) setClientStreamHeaders() {
	setStreamHeaders(rw.header)
	if rw.jsonArray {
		rw.header.Set("Content-Type", "application/json")
	}
}

// setStreamHeaders marks a translated response as an event stream.
func setStreamHeaders(h http.Header) {
	delete(h, "Content-Length")
	h.Set("Content-Type", "text/event-stream")
	setNoBuffering(h)
}

// setNoBuffering asks everything on the way not to buffer or compress a
// stream: no-transform keeps Caddy's encode handler from compressing it
// (encode's default matcher includes text/*), X-Accel-Buffering keeps an
// nginx in front from holding it back.
func setNoBuffering(h http.Header) {
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
}

// isEventStream reports whether a Content-Type is text/event-stream, with
// or without parameters.
func isEventStream(ct string) bool {
	const sse = "text/event-stream"
	if len(ct) < len(sse) || !strings.EqualFold(ct[:len(sse)], sse) {
		return false
	}
	rest := strings.TrimLeft(ct[len(sse):], " \t")
	return rest == "" || rest[0] == ';'
}
