package mock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/louter/louter/record"
	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// The mock can serve a recording made with louter's record setting: every
// chat request is answered with the recorded backend response of a
// matching record — its status, headers and body, or its stream events —
// instead of a scenario, so a recorded session can be run again through
// louter (and a client) with no real backend.
//
// Matching: the first record not served yet whose backend request has the
// same body as the request (compared as compact JSON), else the first
// record not served yet whose backend spoke the request's protocol, in the
// order of the recording. Each record is served once; a request with none
// left gets a 503. A recording's credentials were redacted when it was
// written: the mock checks none.

// replaySet is the records a mock serves, and which were served.
type replaySet struct {
	mu      sync.Mutex
	records []*record.Exchange
	served  []bool
	bodies  [][]byte // each record's backend request body, compact
	timing  bool
}

// provisionReplay loads the recording named by Replay.
func (m *Mock) provisionReplay() error {
	if m.Replay == "" {
		return nil
	}
	xs, err := record.ReadFile(m.Replay)
	if err != nil {
		return fmt.Errorf("louter_mock: replay: %w", err)
	}
	set := &replaySet{timing: m.ReplayTiming}
	for _, x := range xs {
		if x.Backend == nil || x.BackendResponse == nil || x.BackendRequest == nil {
			continue // louter answered it without a backend
		}
		set.records = append(set.records, x)
		set.bodies = append(set.bodies, compactJSON(x.BackendRequest.BodyBytes()))
	}
	if len(set.records) == 0 {
		return fmt.Errorf("louter_mock: replay: %s holds no backend response", m.Replay)
	}
	set.served = make([]bool, len(set.records))
	m.replay = set
	return nil
}

// pick returns the record that answers a request of protocol p with body,
// or nil when none is left.
func (s *replaySet) pick(p translate.Protocol, body []byte) *record.Exchange {
	body = compactJSON(body)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.records {
		if !s.served[i] && bytes.Equal(s.bodies[i], body) {
			s.served[i] = true
			return x
		}
	}
	for i, x := range s.records {
		if !s.served[i] && x.Backend.Protocol == p {
			s.served[i] = true
			return x
		}
	}
	return nil
}

func compactJSON(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

// skippedHeaders are recorded headers the mock does not repeat: the
// length and framing of a body it writes itself, and its own name.
var skippedHeaders = map[string]bool{"Content-Length": true, "Transfer-Encoding": true, BackendHeader: true, "Connection": true}

// serveRecorded answers a request of protocol p with a recorded backend
// response. It returns the id of the record served, "" when none was left.
func (m *Mock) serveRecorded(w http.ResponseWriter, r *http.Request, p translate.Protocol, body []byte) string {
	x := m.replay.pick(p, body)
	if x == nil {
		writePlainError(w, http.StatusServiceUnavailable, "api_error", "louter_mock: the recording has no response left for a "+string(p)+" request")
		return ""
	}
	resp := x.BackendResponse
	h := w.Header()
	for k, v := range resp.Header {
		if !skippedHeaders[http.CanonicalHeaderKey(k)] {
			h[http.CanonicalHeaderKey(k)] = v
		}
	}
	start := time.Now()
	pw := newPacedWriter(r.Context(), w, time.Duration(m.ChunkDelay), m.ChunkSize)
	w.WriteHeader(resp.Status)
	var frame []byte
	for i := range resp.Events {
		e := &resp.Events[i]
		if m.replay.timing {
			// Each event when it came, counted from the start of the
			// exchange as louter recorded it.
			if err := sleepCtx(r.Context(), time.Until(start.Add(time.Duration(e.T)*time.Millisecond))); err != nil {
				return x.ID
			}
		}
		frame = stream.AppendSSE(frame[:0], e.Name, e.Payload())
		if err := pw.writeUnit(frame); err != nil {
			return x.ID
		}
	}
	if len(resp.Events) == 0 {
		if err := pw.writeUnit(resp.BodyBytes()); err != nil {
			return x.ID
		}
	}
	if x.Error == record.ErrBackendCut {
		_ = pw.flush()
		panic(http.ErrAbortHandler) // the recorded backend broke the connection here
	}
	return x.ID
}
