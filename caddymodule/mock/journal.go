package mock

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// Journal bounds. A Claude Code request is about 50 KB, so the defaults keep
// every request of a long agent session while capping the memory a
// forgotten mock can hold.
const (
	journalMaxEntries   = 100
	journalMaxBytes     = 32 << 20 // all recorded bodies together
	journalMaxBodyBytes = 8 << 20  // one recorded body
)

// journalEntry is one request the mock received, as GET .../_mock/requests
// reports it. Headers are recorded as received, credentials included: the
// journal exists so tests can check what a proxy sent upstream.
type journalEntry struct {
	Protocol string `json:"protocol"` // "" for a path no protocol serves
	Method   string `json:"method"`
	Path     string `json:"path"`
	// RawPath is the path as it was on the wire, when it differs from
	// Path (an escaped '/', ':' or '%' in it).
	RawPath string            `json:"raw_path,omitempty"`
	Query   string            `json:"query"`
	Headers map[string]string `json:"headers"` // canonical names; repeated values joined with ", "
	// Body is the request body, byte for byte, when it is JSON, else the
	// body as a JSON string (or a note that it was too large to record).
	// It is written by appendJSON, not by encoding/json, which would
	// compact it.
	Body     json.RawMessage `json:"-"`
	Scenario string          `json:"scenario,omitempty"`
	// Cancelled is set when the client went away before the answer was
	// complete (the request context was cancelled).
	Cancelled bool `json:"cancelled"`

	size int // bytes accounted against journalMaxBytes
}

// journal is the bounded list of requests one named mock received, oldest
// first.
type journal struct {
	mu      sync.Mutex
	entries []*journalEntry
	size    int
}

// journals holds one journal per mock name. It is package-level so a
// journal survives Caddy config reloads, which provision new module values;
// two mocks with the same name share one journal.
var journals = struct {
	sync.Mutex
	byName map[string]*journal
}{byName: map[string]*journal{}}

func journalFor(name string) *journal {
	journals.Lock()
	defer journals.Unlock()
	j := journals.byName[name]
	if j == nil {
		j = &journal{}
		journals.byName[name] = j
	}
	return j
}

// record adds a request to the journal and returns its entry, which update
// may change later.
func (j *journal) record(protocol string, r *http.Request, body []byte) *journalEntry {
	e := &journalEntry{
		Protocol: protocol,
		Method:   r.Method,
		Path:     r.URL.Path,
		RawPath:  r.URL.RawPath,
		Query:    r.URL.RawQuery,
		Headers:  make(map[string]string, len(r.Header)),
		Body:     recordedBody(body),
	}
	e.size = len(e.Body) + len(e.Path) + len(e.Query)
	for name, values := range r.Header {
		v := strings.Join(values, ", ")
		e.Headers[name] = v
		e.size += len(name) + len(v)
	}

	j.mu.Lock()
	defer j.mu.Unlock()
	j.entries = append(j.entries, e)
	j.size += e.size
	drop := 0
	for len(j.entries)-drop > journalMaxEntries || (j.size > journalMaxBytes && len(j.entries)-drop > 1) {
		j.size -= j.entries[drop].size
		j.entries[drop] = nil
		drop++
	}
	if drop > 0 {
		j.entries = append(j.entries[:0], j.entries[drop:]...)
	}
	return e
}

// recordedBody is the journal's form of a request body.
func recordedBody(body []byte) json.RawMessage {
	if len(body) > journalMaxBodyBytes {
		note, _ := json.Marshal(fmt.Sprintf("(body of %d bytes not recorded: over the %d-byte limit)", len(body), journalMaxBodyBytes))
		return note
	}
	if len(body) > 0 && json.Valid(body) {
		return json.RawMessage(append([]byte(nil), body...))
	}
	s, _ := json.Marshal(string(body))
	return s
}

// update changes an entry under the journal's lock, so a concurrent GET
// never sees it half written.
func (j *journal) update(e *journalEntry, fn func(*journalEntry)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	fn(e)
}

// marshal returns the entries as a JSON array, oldest first.
func (j *journal) marshal() ([]byte, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := []byte{'['}
	for i, e := range j.entries {
		if i > 0 {
			out = append(out, ',')
		}
		var err error
		if out, err = e.appendJSON(out); err != nil {
			return nil, err
		}
	}
	return append(out, ']'), nil
}

// appendJSON appends the entry as a JSON object whose body member is the
// recorded body as it is.
func (e *journalEntry) appendJSON(dst []byte) ([]byte, error) {
	head, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encoding a journal entry: %w", err)
	}
	dst = append(dst, head[:len(head)-1]...) // without the closing brace
	dst = append(dst, `,"body":`...)
	dst = append(dst, e.Body...)
	return append(dst, '}'), nil
}

// clear forgets every entry.
func (j *journal) clear() {
	j.mu.Lock()
	defer j.mu.Unlock()
	clear(j.entries)
	j.entries = j.entries[:0]
	j.size = 0
}
