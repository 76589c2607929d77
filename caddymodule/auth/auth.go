// Package auth holds the contract of louter's backend authentication
// modules. Each module is a package of its own below this one (awssigv4,
// azure, google), registered with Caddy in the "http.handlers.louter.auth"
// namespace, as reverseproxy's transports are; a third party writes one the
// same way.
package auth

import (
	"net/http"
	"strings"
)

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

// SecretSource is implemented, optionally, by a BackendAuth that puts
// secrets of its own on a request: a token it fetched, the key id and
// session token of the credentials it signed with. A backend may echo what
// it received in an error body ("the security token ... is invalid: ..."),
// and louter scrubs the secrets of its configuration and of the client's
// request from every error the client gets and from every recording; a
// module's own secrets are known only to the module, so it names them here.
//
// Secrets is called in louter's credential transport once per attempt,
// right after Authorize returned nil, with the request Authorize was given.
// It returns the secrets that request carries or was signed with (the
// current ones, which for a refreshed token are not those of an earlier
// attempt); each is replaced wherever it appears in an error answer or in
// the exchange's record. It must not block on the network (the values are
// on req, or cached from Authorize) and, like Authorize, is called
// concurrently and must not retain req. Strings shorter than eight bytes
// are not scrubbed: they would match ordinary text.
type SecretSource interface {
	Secrets(req *http.Request) []string
}

// BearerToken returns the token of req's "Authorization: <type> <token>"
// header, or "": what a module that sets a bearer token returns from
// Secrets.
func BearerToken(req *http.Request) string {
	_, tok, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(tok)
}
