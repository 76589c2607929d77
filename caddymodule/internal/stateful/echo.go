package stateful

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/louter/louter/caddymodule/internal/httpx"
)

// A continuation's answer echoes the previous_response_id the client sent,
// as OpenAI's does (and an interaction its previous_interaction_id: the
// API's prev member). A translated answer gets it from its encoder
// (translate.Request.PreviousResponseID). A passthrough answer gets it from
// its backend only when the backend was given the id (it keeps the chain);
// when louter put the chain's history back into the input instead (a
// socket's own turns, a chain stored by louter), the backend answers
// "previous_response_id":null, and echoWriter writes the id there.

// echoWriter writes the id in place of null: in every data line of a
// stream (each event's JSON is on one line; a string holding the member's
// text has its quotes escaped, so it never matches), and in a JSON answer:
// held until whole when its Content-Length is known (which is then set
// anew), else passed on as it comes but for its last len(null)-1 bytes,
// where the member may begin, which finish writes.
type echoWriter struct {
	http.ResponseWriter
	flusher httpx.Flusher // w's flush, found once (internal/httpx)
	null    []byte        // `"previous_response_id":null`
	with    []byte        // `"previous_response_id":"<id>"`

	decided, sse, pass bool
	sized              bool // a JSON answer of known length
	status             int
	body               []byte // a JSON answer, held until whole
	line               []byte // the stream's line being read
}

func newEchoWriter(w http.ResponseWriter, member, id string) *echoWriter {
	key, _ := json.Marshal(member)
	val, _ := json.Marshal(id)
	key = append(key, ':')
	return &echoWriter{ResponseWriter: w, flusher: httpx.NewFlusher(w), null: append(slices.Clip(key), "null"...), with: append(key, val...)}
}

func (e *echoWriter) WriteHeader(status int) {
	if e.decided {
		return
	}
	e.decided, e.status = true, status
	e.sse = strings.HasPrefix(e.Header().Get("Content-Type"), "text/event-stream")
	e.pass = status != http.StatusOK
	e.sized = !e.sse && e.Header().Get("Content-Length") != ""
	if e.pass || !e.sized {
		e.ResponseWriter.WriteHeader(status)
	}
}

func (e *echoWriter) Write(p []byte) (int, error) {
	n := len(p)
	if !e.decided {
		e.WriteHeader(http.StatusOK)
	}
	switch {
	case e.pass:
		return e.ResponseWriter.Write(p)
	case !e.sse && !e.sized:
		e.body = bytes.Replace(append(e.body, p...), e.null, e.with, 1)
		keep := min(len(e.body), len(e.null)-1)
		if _, err := e.ResponseWriter.Write(e.body[:len(e.body)-keep]); err != nil {
			return 0, err
		}
		e.body = append(e.body[:0], e.body[len(e.body)-keep:]...)
		return n, nil
	case !e.sse:
		var err error
		e.body, e.pass, err = holdSized(e.ResponseWriter, e.status, e.body, p, func(b []byte) []byte { return bytes.Replace(b, e.null, e.with, 1) })
		if err != nil {
			return 0, err
		}
		return n, nil
	}
	if len(e.line) == 0 && len(p) > 0 && p[len(p)-1] == '\n' && !bytes.Contains(p, e.null) {
		return e.ResponseWriter.Write(p) // whole events, as a passthrough stream comes, with nothing to echo
	}
	if err := writeLines(e.ResponseWriter, &e.line, p, e.endLine); err != nil {
		return 0, err
	}
	return n, nil
}

// endLine appends line to out, with the id in a data line.
func (e *echoWriter) endLine(out, line []byte) []byte {
	if bytes.HasPrefix(line, []byte("data:")) && bytes.Contains(line, e.null) {
		return append(out, bytes.Replace(line, e.null, e.with, 1)...)
	}
	return append(out, line...)
}

// The stateful answer editors (echoWriter, compactionWriter) share the
// two framings they edit.

// holdSized adds p to held, a JSON answer of known Content-Length; once it
// is whole, it writes the status and edit(held) with its length set, and
// says the rest passes (done).
func holdSized(w http.ResponseWriter, status int, held, p []byte, edit func([]byte) []byte) (rest []byte, done bool, err error) {
	held = append(held, p...)
	if want, _ := strconv.Atoi(w.Header().Get("Content-Length")); len(held) < want {
		return held, false, nil
	}
	body := edit(held)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, err = w.Write(body)
	return nil, true, err
}

// writeLines writes the whole lines of a stream, each (with its newline)
// as endLine appends it; a partial line waits in *partial for its end.
func writeLines(w http.ResponseWriter, partial *[]byte, p []byte, endLine func(out, line []byte) []byte) error {
	var out []byte
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			*partial = append(*partial, p...)
			break
		}
		line := p[:i+1]
		if len(*partial) > 0 {
			*partial = append(*partial, line...)
			line = *partial
		}
		out = endLine(out, line)
		*partial = (*partial)[:0]
		p = p[i+1:]
	}
	if len(out) == 0 {
		return nil
	}
	_, err := w.Write(out)
	return err
}

// finish writes what a JSON answer of unknown length held back.
func (e *echoWriter) finish() {
	if !e.pass && !e.sse && !e.sized && len(e.body) > 0 {
		_, _ = e.ResponseWriter.Write(e.body)
		e.body = nil
	}
}

// Flush implements http.Flusher.
func (e *echoWriter) Flush() { _ = e.flusher.Flush() }

// Unwrap lets http.ResponseController reach the writer below.
func (e *echoWriter) Unwrap() http.ResponseWriter { return e.ResponseWriter }
