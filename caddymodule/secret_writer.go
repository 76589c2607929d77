package caddymodule

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/bits"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/caddymodule/internal/redact"
)

// maxScrubbedLine bounds what the secretWriter holds back: an error body,
// or a stream line still waiting for its end. Past it the bytes go on as
// they are; LLM errors and stream lines are far smaller.
const maxScrubbedLine = 1 << 20

// errorMarker is in every JSON error object of the four protocols, and in
// their in-stream error events (Anthropic's "type":"error" event, OpenAI's
// and Gemini's {"error": ...} chunks, Responses' error and response.failed
// events). Model text cannot contain it unescaped.
var errorMarker = []byte(`"error"`)

// carriesError reports whether b holds errorMarker other than as a member
// whose value is null. A Responses stream's lifecycle events
// (response.created, response.in_progress, response.completed) carry the
// response object, whose "error" is null when all is well, and which
// echoes the request's instructions and tools: tens of KB that the
// scrubber's patterns need not run over.
func carriesError(b []byte) bool {
	for {
		i := indexErrorMarker(b)
		if i < 0 {
			return false
		}
		b = b[i+len(errorMarker):]
		j := skipJSONSpace(b, 0)
		if j == len(b) || b[j] != ':' {
			return true // "type":"error", or the line ends here
		}
		j = skipJSONSpace(b, j+1)
		if !bytes.HasPrefix(b[j:], []byte("null")) {
			return true
		}
		b = b[j+len("null"):]
	}
}

// indexErrorMarker is bytes.Index(b, errorMarker), faster on stream
// lines. bytes.Index looks for the marker's first byte, a quote, which a
// JSON line holds every few bytes, and compares at each; this looks eight
// bytes at a time for a quote followed by an 'e' (the bytes that are one
// of them are the zero bytes of the word xor-ed with it), which a line
// without the marker rarely holds, and compares only there. The words
// overlap by one byte, so that a pair across two words is seen.
func indexErrorMarker(b []byte) int {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 7 {
		v := binary.LittleEndian.Uint64(b[i:])
		q, e := v^(ones*'"'), v^(ones*'e')
		// Zero bytes get their high bit set; so may bytes above a zero
		// one (a borrow), never a byte below the lowest: candidates
		// only, each checked by the comparison.
		quotes := (q - ones) &^ q & high
		es := (e - ones) &^ e & high
		m := quotes & (es >> 8) // a quote at byte k, an 'e' at k+1
		for m != 0 {
			j := i + bits.TrailingZeros64(m)/8
			if bytes.HasPrefix(b[j:], errorMarker) {
				return j
			}
			m &= m - 1
		}
	}
	if j := bytes.Index(b[i:], errorMarker); j >= 0 {
		return i + j
	}
	return -1
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// secretWriter sits between louter's responseWriter and the client and
// scrubs secrets (internal/redact) from every error the client gets, in
// every client × backend pair, passthrough included:
//
//   - an error response (status >= 300) is held whole, scrubbed, and sent
//     with its corrected Content-Length;
//   - a stream (an event stream, or the JSON array of a Gemini stream) goes
//     on line by line; a line carrying an error is scrubbed. A line is
//     held back only until its end arrives, which an event's own framing
//     brings with it;
//   - a successful JSON answer is not touched.
type secretWriter struct {
	caddyhttp.ResponseWriterWrapper // by value: one allocation fewer per attempt

	known   []string     // the backend's key and the client's key
	fetched *authSecrets // the auth module's secrets, when it names them (auth_secrets.go)
	stream  bool         // the client asked for a stream

	status int
	mode   uint8
	held   []byte // the error body, or the incomplete stream line
	closed bool

	flusher httpx.Flusher // the client writer's flush (internal/httpx)
}

const (
	secretPass   uint8 = iota // not scrubbed
	secretError               // the body is held and scrubbed at close
	secretStream              // scrubbed line by line
)

func newSecretWriter(w http.ResponseWriter, known ...string) *secretWriter {
	return &secretWriter{ResponseWriterWrapper: caddyhttp.ResponseWriterWrapper{ResponseWriter: w}, known: known, flusher: httpx.NewFlusher(w)}
}

// secrets returns what is scrubbed: the known secrets and those the
// backend's auth module put on the request. Only an error or an error
// line asks, so the common answer costs nothing.
func (sw *secretWriter) secrets() []string {
	if sw.fetched == nil {
		return sw.known
	}
	return append(slices.Clip(sw.known), sw.fetched.all()...)
}

// WriteHeader decides how the body is scrubbed. An error's status waits
// for close, which knows the scrubbed length.
func (sw *secretWriter) WriteHeader(status int) {
	if status < 200 || sw.status != 0 {
		sw.ResponseWriter.WriteHeader(status)
		return
	}
	sw.status = status
	ct := sw.Header().Get("Content-Type")
	switch {
	case status >= 300:
		sw.mode = secretError
		return
	case isEventStream(ct), sw.stream && strings.HasPrefix(strings.ToLower(ct), "application/json"):
		sw.mode = secretStream
	}
	sw.ResponseWriter.WriteHeader(status)
}

// Write implements http.ResponseWriter.
func (sw *secretWriter) Write(p []byte) (int, error) {
	if sw.status == 0 {
		sw.WriteHeader(http.StatusOK)
	}
	switch sw.mode {
	case secretError:
		if len(sw.held)+len(p) <= maxScrubbedLine {
			sw.held = append(sw.held, p...)
			return len(p), nil
		}
		// Too large to be an API error: send what is held and the rest as
		// it comes, as a body of unknown length.
		sw.Header().Del("Content-Length")
		sw.commitError(redact.Scrub(sw.held, sw.secrets()))
		sw.held, sw.mode = nil, secretPass
		return sw.ResponseWriter.Write(p)
	case secretStream:
		return len(p), sw.writeLines(p)
	}
	return sw.ResponseWriter.Write(p)
}

// writeLines sends the complete lines of the held bytes and p, scrubbing
// those that carry an error, and holds the incomplete last line back.
func (sw *secretWriter) writeLines(p []byte) error {
	data := p
	if len(sw.held) > 0 {
		data = append(sw.held, p...)
	}
	end := bytes.LastIndexByte(data, '\n') + 1
	if end == 0 && len(data) > maxScrubbedLine {
		end = len(data) // no line end in sight: let it go
	}
	var err error
	if !carriesError(data[:end]) {
		if end > 0 {
			_, err = sw.ResponseWriter.Write(data[:end])
		}
	} else {
		var out []byte
		for line := range bytes.Lines(data[:end]) {
			if carriesError(line) {
				line = redact.Scrub(line, sw.secrets())
			}
			out = append(out, line...)
		}
		_, err = sw.ResponseWriter.Write(out)
	}
	if end == len(data) {
		sw.held = nil // the usual stream write: whole lines, nothing to hold
	} else {
		sw.held = append(sw.held[:0:0], data[end:]...) // data may be held's own memory
	}
	return err
}

// commitError writes the held status with a body of the given bytes.
func (sw *secretWriter) commitError(body []byte) {
	if sw.Header().Get("Content-Length") != "" {
		sw.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	sw.ResponseWriter.WriteHeader(sw.status)
	_, _ = sw.ResponseWriter.Write(body)
}

// close sends what is still held: the scrubbed error response, or the last
// stream line. The handler calls it once the response is complete.
func (sw *secretWriter) close() {
	if sw.closed {
		return
	}
	sw.closed = true
	switch sw.mode {
	case secretError:
		sw.commitError(redact.Scrub(sw.held, sw.secrets()))
	case secretStream:
		if carriesError(sw.held) {
			sw.held = redact.Scrub(sw.held, sw.secrets())
		}
		if len(sw.held) > 0 {
			_, _ = sw.ResponseWriter.Write(sw.held)
		}
	}
	sw.held = nil
}

// FlushError flushes the client connection, except while an error body is
// held: flushing would send a status before the body's length is known.
func (sw *secretWriter) FlushError() error {
	if sw.mode == secretError && !sw.closed {
		return nil
	}
	return sw.flusher.Flush()
}

// Flush implements http.Flusher.
func (sw *secretWriter) Flush() { _ = sw.FlushError() }

// ReadFrom sends what it reads through Write; the promoted
// ResponseWriterWrapper.ReadFrom would skip the scrubbing.
func (sw *secretWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(writerOnly{sw}, r)
}

// Interface guards
var (
	_ http.ResponseWriter                       = (*secretWriter)(nil)
	_ http.Flusher                              = (*secretWriter)(nil)
	_ io.ReaderFrom                             = (*secretWriter)(nil)
	_ interface{ Unwrap() http.ResponseWriter } = (*secretWriter)(nil)
)
