package logfilter

import (
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/logging"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/louter/louter/caddymodule/internal/redact"
)

func init() {
	caddy.RegisterModule(Redact{})
}

// Redact is a log field filter for Caddy's filter encoder that
// removes the credentials of LLM clients from logged requests. Caddy's
// access log redacts only Authorization, Proxy-Authorization, Cookie and
// Set-Cookie; LLM clients send their keys in X-Api-Key, X-Goog-Api-Key,
// Api-Key, ?key= and more, which it would log in clear.
//
// On a headers field (request>headers) it replaces the value of every
// credential header louter knows (see docs/security.md) with
// REDACTED, whatever log_credentials says; on a URI field (request>uri) it
// replaces the value of every key query parameter (key, api_key, api-key,
// apikey, access_token, in any case), keeping the rest of the URI byte for
// byte. Other fields pass unchanged.
//
//	log {
//	    format filter {
//	        request>headers louter_redact
//	        request>uri     louter_redact
//	    }
//	}
type Redact struct{}

// CaddyModule returns the Caddy module information.
func (Redact) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "caddy.logging.encoders.filter.louter_redact",
		New: func() caddy.Module { return new(Redact) },
	}
}

// UnmarshalCaddyfile sets up the filter from Caddyfile tokens; it takes no
// options.
func (Redact) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the filter name
	if d.NextArg() {
		return d.ArgErr()
	}
	if d.NextBlock(d.Nesting()) {
		return d.Err("louter_redact takes no options")
	}
	return nil
}

// Filter implements logging.LogFieldFilter.
func (Redact) Filter(in zapcore.Field) zapcore.Field {
	switch v := in.Interface.(type) {
	case caddyhttp.LoggableHTTPHeader:
		return zap.Object(in.Key, caddyhttp.LoggableHTTPHeader{Header: redactHeader(v.Header), ShouldLogCredentials: v.ShouldLogCredentials})
	case http.Header:
		return zap.Object(in.Key, caddyhttp.LoggableHTTPHeader{Header: redactHeader(v)})
	}
	if in.Type == zapcore.StringType {
		in.String = redactURI(in.String)
	}
	return in
}

// redactHeader returns h, or a copy of it with its credential headers'
// values replaced.
func redactHeader(h http.Header) http.Header {
	var out http.Header
	for k := range h {
		if !redact.IsCredentialHeader(k) {
			continue
		}
		if out == nil {
			out = h.Clone()
		}
		out[k] = []string{redact.LogValue}
	}
	if out == nil {
		return h
	}
	return out
}

// redactURI replaces the values of a URI's key query parameters.
func redactURI(uri string) string {
	path, query, ok := strings.Cut(uri, "?")
	if !ok {
		return uri
	}
	query, fragment, hasFragment := strings.Cut(query, "#")
	out := path + "?" + redact.MapQuery(query, func(string) (string, bool) { return redact.LogValue, true })
	if hasFragment {
		out += "#" + fragment
	}
	return out
}

// Interface guards
var (
	_ logging.LogFieldFilter = Redact{}
	_ caddyfile.Unmarshaler  = Redact{}
)
