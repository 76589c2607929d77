package mock

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// pacedWriter writes a response body one unit (one stream event, one
// fixture event, one JSON body) at a time, the way a real provider trickles
// its stream: it waits delay between units, cuts each unit into pieces of
// at most chunkSize bytes (to exercise clients' reassembly of events split
// across reads) and flushes after every piece. It stops as soon as the
// request context is cancelled.
type pacedWriter struct {
	ctx       context.Context
	w         http.ResponseWriter
	rc        *http.ResponseController
	delay     time.Duration
	chunkSize int
	started   bool // a unit was written: the next one waits first

	// Set from the request's stall headers (stall.go): one pause of stall
	// after stallAfter units, and nothing written after truncateAfter
	// units when it is not zero.
	stall         time.Duration
	stallAfter    int
	truncateAfter int
	units         int // units written
}

func newPacedWriter(ctx context.Context, w http.ResponseWriter, delay time.Duration, chunkSize int) *pacedWriter {
	return &pacedWriter{ctx: ctx, w: w, rc: http.NewResponseController(w), delay: delay, chunkSize: chunkSize}
}

// writeUnit writes one unit. An empty unit is skipped without a pause. It
// returns the context's error when the client went away, or the write
// error.
func (p *pacedWriter) writeUnit(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if p.truncateAfter > 0 && p.units >= p.truncateAfter {
		return nil
	}
	if p.started && p.delay > 0 {
		if err := sleepCtx(p.ctx, p.delay); err != nil {
			return err
		}
	}
	if p.stall > 0 && p.units == p.stallAfter {
		if err := sleepCtx(p.ctx, p.stall); err != nil {
			return err
		}
	}
	p.started = true
	p.units++
	for len(b) > 0 {
		if err := p.ctx.Err(); err != nil {
			return err
		}
		n := len(b)
		if p.chunkSize > 0 && n > p.chunkSize {
			n = p.chunkSize
		}
		if _, err := p.w.Write(b[:n]); err != nil {
			return err
		}
		if err := p.flush(); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// flush sends what was written to the client. A writer that cannot flush
// is not an error: the bytes go out when the handler returns.
func (p *pacedWriter) flush() error {
	if err := p.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// sleepCtx waits for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
