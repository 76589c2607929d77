package caddymodule

import "net/http"

// SetAzureTransport makes the auth azure modules provisioned from now on
// reach Entra ID through c (a loopback authority's TLS client), for the
// integration tests; it returns the function that undoes it.
func SetAzureTransport(c *http.Client) (undo func()) {
	old := azureTransport
	azureTransport = c
	return func() { azureTransport = old }
}
