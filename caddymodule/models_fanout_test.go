package caddymodule

import (
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// listingLouter has three OpenAI Chat backends with list_models
// passthrough, a, b and c, routed a-*, b-* and c-*; each answers its list
// ({name}-model) after delay[name], and counts the times it was asked.
func listingLouter(t *testing.T, l *Louter, delay map[string]time.Duration, asked *atomic.Int64) *Louter {
	t.Helper()
	l.Backends = map[string]*Backend{}
	ups := map[string]caddyhttp.MiddlewareHandler{}
	for _, name := range []string{"a", "b", "c"} {
		l.Backends[name] = &Backend{Protocol: translate.ProtocolOpenAIChat, ListModels: listModelsPassthrough}
		l.Models = append(l.Models, ModelRoute{Match: name + "-*", Backend: name})
		body := `{"object":"list","data":[{"id":"` + name + `-model"}]}`
		answer := proxyLike(http.StatusOK, jsonHeader(body), body)
		ups[name] = upstreamFunc(func(w http.ResponseWriter, r *http.Request) error {
			asked.Add(1)
			select {
			case <-time.After(delay[name]):
			case <-r.Context().Done():
				return r.Context().Err() // as reverse_proxy gives up
			}
			return answer(w, r)
		})
	}
	return newLouter(t, l, ups)
}

// listIDs asks for the OpenAI model list with key and returns its ids.
func listIDs(t *testing.T, l *Louter, key string) []string {
	t.Helper()
	r := newRequest(http.MethodGet, "/v1/models", "")
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	rec := newFlushRecorder()
	if err := l.ServeHTTP(rec, r, &nextRecorder{}); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("list: %v, status %d: %s", err, rec.Code, rec.Body.String())
	}
	var ids []string
	for _, m := range gjson.Get(rec.Body.String(), "data.#.id").Array() {
		ids = append(ids, m.String())
	}
	return ids
}

func TestListModelsFanOut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	slow := 2 * time.Second
	tests := []struct {
		name  string
		delay map[string]time.Duration
		want  []string
		// took: the list answers within this long (the sum of the
		// delays would be far more).
		took time.Duration
	}{
		{"all slow", map[string]time.Duration{"a": slow, "b": slow, "c": slow}, nil, timeout + 400*time.Millisecond},
		{"one slow", map[string]time.Duration{"a": 0, "b": slow, "c": 100 * time.Millisecond}, []string{"a-model", "c-model"}, timeout + 400*time.Millisecond},
		{"all in time", map[string]time.Duration{"a": 200 * time.Millisecond, "b": 200 * time.Millisecond, "c": 200 * time.Millisecond}, []string{"a-model", "b-model", "c-model"}, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked atomic.Int64
			l := listingLouter(t, &Louter{ListModelsTimeout: caddy.Duration(timeout)}, tt.delay, &asked)
			start := time.Now()
			got := listIDs(t, l, "")
			if took := time.Since(start); took > tt.took {
				t.Errorf("the list took %v, want at most %v", took, tt.took)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ids %q, want %q", got, tt.want)
			}
			if n := asked.Load(); n != 3 {
				t.Errorf("%d backends asked, want 3", n)
			}
		})
	}
}

func TestListModelsCache(t *testing.T) {
	var asked atomic.Int64
	l := listingLouter(t, &Louter{}, map[string]time.Duration{}, &asked)
	want := []string{"a-model", "b-model", "c-model"}
	for i := range 3 {
		if got := listIDs(t, l, ""); !slices.Equal(got, want) {
			t.Fatalf("list %d: ids %q, want %q", i, got, want)
		}
	}
	if n := asked.Load(); n != 3 {
		t.Errorf("three lists asked the backends %d times, want 3 (once each)", n)
	}
	for k, e := range l.listCache.entries { // the lists' time is up
		e.expires = time.Now().Add(-time.Second)
		l.listCache.entries[k] = e
	}
	_ = listIDs(t, l, "")
	if n := asked.Load(); n != 6 {
		t.Errorf("after the lists expired the backends were asked %d times in all, want 6", n)
	}
}

// TestListModelsCachePerCredential checks that the list of a backend asked
// with the client's own credential is kept per credential, and that a
// client's models filter the list after the cache.
func TestListModelsCachePerCredential(t *testing.T) {
	var asked atomic.Int64
	l := &Louter{ClientAccess: ClientAccess{Clients: []*ClientKey{
		{Name: "alice", KeySHA256: sha256HexForTest("alice-key")},
		{Name: "bob", KeySHA256: sha256HexForTest("bob-key"), Models: []string{"a-*"}},
	}}}
	l = listingLouter(t, l, map[string]time.Duration{}, &asked)
	for _, b := range l.Backends {
		b.PassClientAuth = true
	}
	all := []string{"a-model", "b-model", "c-model"}
	if got := listIDs(t, l, "alice-key"); !slices.Equal(got, all) {
		t.Errorf("alice: ids %q, want %q", got, all)
	}
	if got := listIDs(t, l, "bob-key"); !slices.Equal(got, []string{"a-model"}) {
		t.Errorf("bob: ids %q, want only a-model", got)
	}
	if n := asked.Load(); n != 6 {
		t.Errorf("two clients' credentials asked the backends %d times, want 6 (each backend for each)", n)
	}
	_ = listIDs(t, l, "alice-key")
	if n := asked.Load(); n != 6 {
		t.Errorf("alice's second list asked the backends again (%d times in all)", n)
	}
}

func TestListCacheBounded(t *testing.T) {
	c := &listCache{ttl: time.Minute}
	for i := range maxListCache + 10 {
		c.put(strconv.Itoa(i), []string{"m"})
	}
	if n := len(c.entries); n > maxListCache {
		t.Errorf("%d lists kept, want at most %d", n, maxListCache)
	}
	if _, ok := c.get(strconv.Itoa(maxListCache + 9)); !ok {
		t.Error("the newest list was not kept")
	}
}
