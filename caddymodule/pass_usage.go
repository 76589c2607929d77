package caddymodule

import "strings"

// maxPassUsageBody bounds the copy of a passthrough JSON answer kept to
// read its usage: an answer larger than this is passed on all the same,
// without token counts.
const maxPassUsageBody = 1 << 20

// passUsageCopy is the copy of a passthrough JSON answer (a 2xx answer to
// a client that did not ask for a stream) the writer keeps, so the
// exchange record gets its token counts and stop reason as it does for a
// translated answer. The bytes go to the client as they arrive; only the
// copy waits for the end.
type passUsageCopy struct {
	on  bool
	buf []byte
}

// startPassUsage decides, when a passthrough answer begins, whether to
// keep a copy of it.
func (rw *responseWriter) startPassUsage(status int) {
	rw.passCopy.on = status < 300 && !rw.wantStream &&
		strings.HasPrefix(strings.ToLower(rw.header.Get("Content-Type")), "application/json") &&
		rw.header.Get("Content-Encoding") == ""
}

// copyPassUsage keeps a chunk of a passthrough answer.
func (rw *responseWriter) copyPassUsage(p []byte) {
	if !rw.passCopy.on {
		return
	}
	if len(rw.passCopy.buf)+len(p) > maxPassUsageBody {
		rw.passCopy = passUsageCopy{} // too large: no counts
		return
	}
	rw.passCopy.buf = append(rw.passCopy.buf, p...)
}

// readPassUsage reads the usage and stop reason of the kept answer.
func (rw *responseWriter) readPassUsage() {
	buf := rw.passCopy.buf
	rw.passCopy = passUsageCopy{}
	if len(buf) == 0 {
		return
	}
	if resp, err := rw.backend.codec.DecodeResponse(buf); err == nil {
		rw.usage, rw.hasUsage, rw.stop = resp.Usage, true, resp.StopReason
		rw.count.response(resp)
		rw.hookResponse(resp)
	}
}
