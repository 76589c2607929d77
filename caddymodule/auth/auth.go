// Package auth holds the contract of louter's backend authentication
// modules. Each module is a package of its own below this one (awssigv4,
// azure, google), registered with Caddy in the "http.handlers.louter.auth"
// namespace, as reverseproxy's transports are; a third party writes one the
// same way.
package auth

import "net/http"

// BackendAuth is implemented by the modules in the
// "http.handlers.louter.auth" namespace: ways of authenticating louter's
// requests to a backend that a static api_key cannot express — a signature
// over each request (AWS SigV4), or a short-lived token that must be
// obtained and refreshed (Google Application Default Credentials, Azure
// Entra ID). A backend names one in its auth block, instead of api_key.
//
// Authorize is called inside louter's credential transport,
// on the copy of the request that reverse_proxy hands to its transport, so
// nothing it adds appears in reverse_proxy's logs; it runs once per attempt,
// so a retried or fallen-back request is signed afresh. req is owned by the
// caller: Authorize may set headers and may read req.Body, provided it
// leaves a body that reads the same bytes (GetBody gives a fresh copy). It
// is called concurrently from many requests and must not retain req. An
// error fails the attempt as an unreachable backend would (502 in the
// client's protocol, fallback applies); its text is logged, so it must
// never contain a secret.
type BackendAuth interface {
	Authorize(req *http.Request) error
}
