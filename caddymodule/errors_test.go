package caddymodule

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/translate"
)

func TestAsError(t *testing.T) {
	own := &translate.Error{Status: 422, Kind: translate.ErrInvalidRequest, Message: "bad"}
	if got := asError(fmt.Errorf("wrapped: %w", own), 400); got != own {
		t.Errorf("a wrapped translate.Error was not kept: %+v", got)
	}
	noStatus := &translate.Error{Kind: translate.ErrInvalidRequest, Message: "bad"}
	if got := asError(noStatus, 400); got.Status != 400 || noStatus.Status != 0 {
		t.Errorf("status not defaulted on a copy: %+v, original %+v", got, noStatus)
	}
	if got := asError(errors.New("plain"), 400); got.Status != 400 || got.Kind != translate.ErrInvalidRequest || got.Message != "plain" {
		t.Errorf("plain error: %+v", got)
	}
}

func TestErrorStatus(t *testing.T) {
	anthropic, _ := translate.Lookup(translate.ProtocolAnthropic)
	gemini, _ := translate.Lookup(translate.ProtocolGemini)
	for _, tt := range []struct {
		client translate.Codec
		e      translate.Error
		want   int
	}{
		{anthropic, translate.Error{Status: 429, Kind: translate.ErrRateLimit}, 429},
		{anthropic, translate.Error{Kind: translate.ErrOverloaded}, 529},
		{anthropic, translate.Error{Status: 200, Kind: translate.ErrAPI}, 500}, // never answer an error with a success
		{anthropic, translate.Error{Status: 99, Kind: translate.ErrNotFound}, 404},
		{gemini, translate.Error{Status: 529, Kind: translate.ErrOverloaded}, 503}, // Gemini has no 529
		{gemini, translate.Error{Kind: translate.ErrOverloaded}, 503},
	} {
		if got := errorStatus(tt.client, &tt.e); got != tt.want {
			t.Errorf("errorStatus(%s, %+v) = %d, want %d", tt.client.Protocol(), tt.e, got, tt.want)
		}
	}
}

func TestUpstreamError(t *testing.T) {
	he := caddyhttp.Error(http.StatusGatewayTimeout, errors.New("dial tcp 10.0.0.1:443: i/o timeout"))
	e := upstreamError(he, "oai")
	if e.Status != 504 || e.Kind != translate.ErrTimeout || !strings.Contains(e.Message, he.ID) || strings.Contains(e.Message, "10.0.0.1") {
		t.Errorf("%+v", e)
	}
	if e := upstreamError(errors.New("x"), "oai"); e.Status != 502 || e.Kind != translate.ErrAPI {
		t.Errorf("%+v", e)
	}
}
