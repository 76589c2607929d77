package caddymodule

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/translate"
)

// errorStatus is the status to answer a client of codec client with e.
func errorStatus(client translate.Codec, e *translate.Error) int {
	return translate.ClientStatus(client.Protocol(), e)
}

// asError returns err as a translate.Error, or a new one of the given status
// carrying err's message.
func asError(err error, status int) *translate.Error {
	if te, ok := errors.AsType[*translate.Error](err); ok {
		if te.Status == 0 {
			c := *te
			c.Status = status
			return &c
		}
		return te
	}
	return translate.NewError(status, err.Error())
}

// upstreamError is the error louter answers with when the upstream handler
// failed without writing anything (no upstream reachable, a timeout). Its
// status is the handler's, 502 by default; the message says what happened
// without the internal addresses the underlying error names (those are
// logged), and carries Caddy's error ID so the two can be matched.
func upstreamError(err error, backend string) *translate.Error {
	status := http.StatusBadGateway
	var id string
	if he, ok := errors.AsType[caddyhttp.HandlerError](err); ok {
		if he.StatusCode != 0 {
			status = he.StatusCode
		}
		id = he.ID
	}
	msg := fmt.Sprintf("louter: backend %q could not be reached", backend)
	if status == http.StatusGatewayTimeout {
		msg = fmt.Sprintf("louter: backend %q timed out", backend)
	}
	if id != "" {
		msg += " (error id " + id + ")"
	}
	return translate.NewError(status, msg)
}
