package stateful

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"go.uber.org/zap"

	"github.com/louter/louter/state"
	"github.com/louter/louter/translate"
)

// A cancel sent to another instance sharing the store writes its marker,
// then the status "cancelled"; the running turn's in_progress may overwrite
// that status (the two writes race), and the instance running it never sees
// its context cancelled. The turn must still end "cancelled", by the
// marker: before the marker it ended "failed".
func TestBackgroundCancelFromElsewhereSurvivesOverwrite(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var rejected *translate.Error
	host := Host{
		Logger: zap.NewNop(),
		Client: func(*http.Request) (string, bool) { return "", false },
		API:    func(translate.Protocol) *API { return &Responses },
		Route:  func(string) (Backend, bool) { return &fakeStateBackend{api: &Responses}, true },
		Chat: func(http.ResponseWriter, *http.Request) error {
			close(started)
			<-release
			return nil // the backend's answer is not stored: the turn was cancelled
		},
		Reject: func(_ http.ResponseWriter, _ translate.Codec, e *translate.Error) error { rejected = e; return nil },
	}
	sl, err := New(&Config{MaxStoredBytes: 1 << 20}, nil, nil, host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sl.s.release)
	codec, _ := translate.Lookup(translate.ProtocolOpenAIResponses)
	body := []byte(`{"model":"m","input":"bg","background":true}`)
	r := httptest.NewRequest(http.MethodPost, "/v1/responses", strings.NewReader(string(body)))
	w := httptest.NewRecorder()
	if err := sl.RunBackground(w, r, translate.ProtocolOpenAIResponses, codec, body); err != nil || rejected != nil {
		t.Fatalf("runBackground: %v %+v", err, rejected)
	}
	id := gjson.Get(w.Body.String(), "id").Str
	<-started // in_progress is stored: the cancel's status write lost the race to it
	owner, ctx := sl.stateOwner(r), context.Background()
	if err := sl.s.store.Put(ctx, state.Record{ID: cancelledPrefix + id, Owner: owner, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := sl.s.turn(ctx, owner, id, &Responses)
		if err != nil {
			t.Fatal(err)
		}
		status := gjson.GetBytes(st.Response, "status").Str
		if status != "queued" && status != "in_progress" {
			if status != "cancelled" {
				t.Fatalf("the turn ended %q, want cancelled: %s", status, st.Response)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turn is still %s", status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
