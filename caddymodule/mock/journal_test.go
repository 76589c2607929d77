package mock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestJournalRecordsRequests(t *testing.T) {
	m := newMock(t, nil)
	// Whitespace and key order are kept: the journal shows the body as sent.
	body := "{\n  \"model\": \"claude-test\", \"max_tokens\": 10,\n  \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]\n}"
	r := newRequest(http.MethodPost, "/anthropic/v1/messages?beta=true", body, "X-Api-Key", "backend-key", ScenarioHeader, "text")
	r.Header.Add("Anthropic-Beta", "a")
	r.Header.Add("Anthropic-Beta", "b")
	serve(t, m, r)
	serve(t, m, newRequest(http.MethodPost, "/v1/chat/completions", "not json at all", ScenarioHeader, "text"))

	w := serve(t, m, newRequest(http.MethodGet, "/prefix/_mock/requests", ""))
	if ct := w.Header().Get("Content-Type"); ct != "application/json" || w.Header().Get(BackendHeader) != m.Name {
		t.Errorf("headers %v", w.Header())
	}
	var entries []struct {
		Protocol, Method, Path, Query, Scenario string
		Headers                                 map[string]string
		Body                                    json.RawMessage
		Cancelled                               *bool
	}
	if err := json.Unmarshal(w.Body.Bytes(), &entries); err != nil {
		t.Fatalf("%v\n%s", err, w.Body)
	}
	if len(entries) != 2 {
		t.Fatalf("%d entries, want 2", len(entries))
	}
	e := entries[0]
	if e.Protocol != "anthropic" || e.Method != "POST" || e.Path != "/anthropic/v1/messages" || e.Query != "beta=true" || e.Scenario != "text" {
		t.Errorf("entry %+v", e)
	}
	if e.Headers["X-Api-Key"] != "backend-key" || e.Headers["Anthropic-Beta"] != "a, b" {
		t.Errorf("headers %v", e.Headers)
	}
	if !bytes.Contains(w.Body.Bytes(), []byte(`"body":`+body)) {
		t.Errorf("body not recorded byte for byte:\n%s", w.Body)
	}
	if e.Cancelled == nil || *e.Cancelled {
		t.Errorf("cancelled %v, want false", e.Cancelled)
	}
	if entries[1].Protocol != "openai_chat" || string(entries[1].Body) != `"not json at all"` {
		t.Errorf("non-JSON body recorded as %s", entries[1].Body)
	}

	// DELETE clears, under any prefix.
	w = serve(t, m, newRequest(http.MethodDelete, "/x/_mock/requests", ""))
	if w.Code != http.StatusNoContent {
		t.Errorf("DELETE: %d", w.Code)
	}
	if w := serve(t, m, newRequest(http.MethodGet, "/_mock/requests", "")); w.Body.String() != "[]" {
		t.Errorf("after DELETE: %s", w.Body)
	}
	if w := serve(t, m, newRequest(http.MethodPost, "/_mock/requests", "")); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST journal: %d", w.Code)
	}
}

func TestJournalKeepsTheLastEntries(t *testing.T) {
	m := newMock(t, nil)
	for i := 1; i <= journalMaxEntries+5; i++ {
		serve(t, m, newRequest(http.MethodPost, "/nowhere", fmt.Sprintf(`{"n":%d}`, i)))
	}
	e := journalEntries(t, m)
	if len(e) != journalMaxEntries {
		t.Fatalf("%d entries, want %d", len(e), journalMaxEntries)
	}
	first := e[0]["body"].(map[string]any)["n"]
	last := e[len(e)-1]["body"].(map[string]any)["n"]
	if first != float64(6) || last != float64(journalMaxEntries+5) {
		t.Errorf("entries run from %v to %v, want 6 to %d", first, last, journalMaxEntries+5)
	}
}

func TestJournalBoundsMemory(t *testing.T) {
	var j journal
	r := httptest.NewRequest(http.MethodPost, "/v1/messages", nil)
	big := []byte(`"` + strings.Repeat("x", 1<<20) + `"`)
	n := journalMaxBytes/len(big) + 10
	for i := 0; i < n; i++ {
		j.record("anthropic", r, big)
	}
	if j.size > journalMaxBytes || len(j.entries) >= n || len(j.entries) == 0 {
		t.Errorf("%d entries of %d bytes, %d bytes in all (limit %d)", len(j.entries), len(big), j.size, journalMaxBytes)
	}
	// One body over the per-body limit is replaced by a note.
	huge := bytes.Repeat([]byte(" "), journalMaxBodyBytes+1)
	e := j.record("anthropic", r, huge)
	var note string
	if err := json.Unmarshal(e.Body, &note); err != nil || !strings.Contains(note, "not recorded") {
		t.Errorf("oversized body recorded as %.100s", e.Body)
	}
	j.clear()
	if j.size != 0 || len(j.entries) != 0 {
		t.Errorf("clear left %d entries, %d bytes", len(j.entries), j.size)
	}
}

func TestJournalIsSharedByName(t *testing.T) {
	// A config reload provisions a new value with the same name: it must see
	// the same journal.
	a := newMock(t, &Mock{Name: "shared-journal"})
	serve(t, a, newRequest(http.MethodPost, "/nowhere", `{}`))
	b := newMock(t, &Mock{Name: "shared-journal"}) // newMock clears it
	serve(t, b, newRequest(http.MethodPost, "/nowhere", `{}`))
	if n := len(journalEntries(t, a)); n != 1 {
		t.Errorf("%d entries through the first value, want the second value's 1", n)
	}
	other := newMock(t, &Mock{Name: "other-journal"})
	if n := len(journalEntries(t, other)); n != 0 {
		t.Errorf("another name sees %d entries", n)
	}
}

func TestJournalConcurrentUse(t *testing.T) {
	m := newMock(t, nil)
	body := protocolCases[0].body(true, "hi", "", nil)
	done := make(chan struct{})
	for i := 0; i < 8; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := 0; j < 20; j++ {
				w := httptest.NewRecorder()
				_ = m.ServeHTTP(w, newRequest(http.MethodPost, "/v1/messages", body, ScenarioHeader, "text"), nil)
				w = httptest.NewRecorder()
				_ = m.ServeHTTP(w, newRequest(http.MethodGet, "/_mock/requests", ""), nil)
				if !json.Valid(w.Body.Bytes()) {
					t.Errorf("journal read during writes is not JSON: %.200s", w.Body)
				}
			}
		}()
	}
	for i := 0; i < 8; i++ {
		<-done
	}
	if n := len(journalEntries(t, m)); n != journalMaxEntries {
		t.Errorf("%d entries after 160 requests, want %d", n, journalMaxEntries)
	}
}
