package caddymodule

import (
	"net/http"

	"github.com/louter/louter/caddymodule/internal/testhook"
)

// SetAzureTransport makes the auth azure modules provisioned from now on
// reach Entra ID through c (a loopback authority's TLS client), for the
// integration tests; it returns the function that undoes it.
func SetAzureTransport(c *http.Client) (undo func()) {
	old := testhook.AzureTransport
	testhook.AzureTransport = c
	return func() { testhook.AzureTransport = old }
}
