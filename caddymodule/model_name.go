package caddymodule

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/louter/louter/translate"
)

// A model name is data. Where a protocol puts it into the backend's URL
// (Gemini: .../models/{model}:generateContent), a name the client chose
// must not be able to change which resource the URL names: "ge-flash/../ge-pro"
// matches a route "ge-*" but, sent as a path, would reach ge-pro with the
// operator's key. So a client's name bound for a URL is refused when it
// holds a path separator, a "..", or a control character, and every other
// byte that means something in a path is percent-escaped. A name from a
// route's rename was written by the operator and is trusted: its '/'
// separators stay (Gemini's "tunedModels/x"), each segment is escaped.
// Which protocols put the name into the URL is their row's modelInURL
// (protocols.go).

// checkModelName returns why a client's model name cannot be used as a
// path segment, or "" when it can.
func checkModelName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case strings.ContainsAny(name, `/\`):
		return "contains a path separator"
	case strings.Contains(name, ".."):
		return `contains ".."`
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f {
			return "contains a control character"
		}
	}
	return ""
}

// badModelName is the 400 a refused model name is answered with.
func badModelName(name, why string) *translate.Error {
	return &translate.Error{
		Status:  http.StatusBadRequest,
		Kind:    translate.ErrInvalidRequest,
		Message: fmt.Sprintf("louter: model name %q %s; a model name is not a path", name, why),
		Param:   "model",
	}
}

// checkBackendModel refuses a client's model name that would be put into
// the backend's URL and cannot be a path segment. renamed is whether the
// name comes from the route's rename, which is trusted.
func checkBackendModel(b *Backend, name string, renamed bool) *translate.Error {
	if renamed || !rowOf(b.Protocol).modelInURL { // protocols.go
		return nil
	}
	if why := checkModelName(name); why != "" {
		return badModelName(name, why)
	}
	return nil
}

// escapeModelPath percent-escapes a model name for a URL path, one '/'
// separated segment at a time (only a rename has more than one). ':' is
// escaped too: Gemini's method follows the model after a ':'.
func escapeModelPath(name string) string {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(url.PathEscape(s), ":", "%3A")
	}
	return strings.Join(segs, "/")
}

// setBackendPath points u at the backend: basePath (as configured) then the
// endpoint, which the protocol's endpoint function returns already escaped.
// Path and RawPath are both set, so an escaped '/' or ':' in a model name
// stays escaped on the wire.
func setBackendPath(u *url.URL, basePath, escapedEndpoint string) {
	raw := escapeModelPath(basePath) + escapedEndpoint
	p, err := url.PathUnescape(raw)
	if err != nil {
		p = raw // cannot happen: raw is escaped by construction
	}
	u.Path, u.RawPath = p, ""
	if u.EscapedPath() != raw {
		u.RawPath = raw // only when Go's own escaping of Path differs (an escaped '/' or ':')
	}
}
