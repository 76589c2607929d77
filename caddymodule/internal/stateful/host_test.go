package stateful

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/zap"

	"github.com/louter/louter/translate"
)

// fakeStateBackend is a Backend that records the DELETEs it is sent.
type fakeStateBackend struct {
	api     *API
	deleted []string
}

func (f *fakeStateBackend) StateName() string                        { return "fake" }
func (f *fakeStateBackend) PassesThrough(translate.Protocol) bool    { return true }
func (f *fakeStateBackend) StatefulAPI() *API                        { return f.api }
func (f *fakeStateBackend) AuthenticatesClient(r *http.Request) bool { return false }
func (f *fakeStateBackend) DeleteStored(_ context.Context, _ *http.Request, id string) (int, error) {
	f.deleted = append(f.deleted, id)
	return http.StatusOK, nil
}

// The layer reaches a backend only through its host: a stored turn's
// DELETE goes to the backend the host names, and only when that
// backend's row serves the turn's API.
func TestStateLayerDeleteAtBackendThroughHost(t *testing.T) {
	other := API{path: "/v1/other"}
	for _, tc := range []struct {
		name    string
		backend *fakeStateBackend // nil: the host knows no such backend
		want    int
	}{
		{"the row's API", &fakeStateBackend{api: &Responses}, 1},
		{"another API", &fakeStateBackend{api: &other}, 0},
		{"no backend", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sl := &Layer{Host: Host{
				Logger: zap.NewNop(),
				Backend: func(name string) (Backend, bool) {
					if tc.backend == nil || name != "fake" {
						return nil, false
					}
					return tc.backend, true
				},
			}}
			sl.deleteAtBackend(httptest.NewRequest(http.MethodDelete, "/v1/responses/resp_1", nil), &Responses, "fake", "resp_1")
			if tc.backend != nil && len(tc.backend.deleted) != tc.want {
				t.Errorf("the backend got %d DELETEs, want %d", len(tc.backend.deleted), tc.want)
			}
		})
	}
}

// With stored responses off, the layer answers a stored turn's URL
// itself, through the host's reject.
func TestStateLayerDisabledRejectsThroughHost(t *testing.T) {
	var got *translate.Error
	sl := &Layer{Host: Host{
		Logger: zap.NewNop(),
		API:    func(translate.Protocol) *API { return &Responses },
		Reject: func(w http.ResponseWriter, _ translate.Codec, e *translate.Error) error {
			got = e
			return nil
		},
	}}
	r := httptest.NewRequest(http.MethodGet, "/v1/responses/resp_1", nil)
	done, err := sl.ServeState(httptest.NewRecorder(), r, translate.ProtocolOpenAIResponses, "/v1/responses/resp_1")
	if !done || err != nil {
		t.Fatalf("served %v, %v; want the layer to answer", done, err)
	}
	if got == nil || got.Status != http.StatusNotFound {
		t.Fatalf("rejected with %+v, want a 404", got)
	}
}
