package mock

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Request headers that make the mock fall silent or stop, whatever the
// scenario, for tests of keep-alives, idle and first-byte timeouts and
// truncated streams.
const (
	// StallHeader pauses the answer once, for the duration it gives
	// ("300ms"), after the second unit of the body (a stream's start and
	// its first delta): a backend silent mid-stream.
	StallHeader = "X-Mock-Stall"
	// StallAfterHeader moves X-Mock-Stall's pause to after the number of
	// units it gives ("1": right after a stream's start event).
	StallAfterHeader = "X-Mock-Stall-After"
	// StallBeforeHeader pauses for the duration it gives before the
	// response status is sent: a backend slow to answer at all.
	StallBeforeHeader = "X-Mock-Stall-Before"
	// TruncateHeader ends the body cleanly after the number of units it
	// gives ("3"): a stream closed before its end, with no connection
	// error.
	TruncateHeader = "X-Mock-Truncate"
)

// stallAfterUnits is how many units are written before X-Mock-Stall's
// pause.
const stallAfterUnits = 2

// applyStallHeaders sets up pw from the request's stall and truncate
// headers. Malformed values are ignored.
func applyStallHeaders(pw *pacedWriter, r *http.Request) {
	if d, ok := headerDuration(r, StallHeader); ok {
		pw.stall, pw.stallAfter = d, stallAfterUnits
		if n, err := strconv.Atoi(strings.TrimSpace(r.Header.Get(StallAfterHeader))); err == nil && n > 0 {
			pw.stallAfter = n
		}
	}
	if n, err := strconv.Atoi(strings.TrimSpace(r.Header.Get(TruncateHeader))); err == nil && n > 0 {
		pw.truncateAfter = n
	}
}

// stallBefore waits as X-Mock-Stall-Before asks, or until the client goes.
func stallBefore(ctx context.Context, r *http.Request) error {
	if d, ok := headerDuration(r, StallBeforeHeader); ok {
		return sleepCtx(ctx, d)
	}
	return nil
}

func headerDuration(r *http.Request, name string) (time.Duration, bool) {
	v := strings.TrimSpace(r.Header.Get(name))
	if v == "" {
		return 0, false
	}
	d, err := time.ParseDuration(v)
	return d, err == nil && d > 0
}
