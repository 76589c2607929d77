package caddymodule

import (
	"github.com/louter/louter/caddymodule/auth/awssigv4"
	"github.com/louter/louter/caddymodule/auth/azure"
	"github.com/louter/louter/caddymodule/auth/google"
	"github.com/louter/louter/caddymodule/logfilter"
)

// The backend auth modules and the log filter are Caddy modules in
// packages of their own, as reverseproxy's fastcgi transport is; these
// aliases keep their names in caddymodule's API, and the imports register
// them wherever louter is.
type (
	// AWSSigV4 is http.handlers.louter.auth.aws_sigv4 (package auth/awssigv4).
	AWSSigV4 = awssigv4.Auth
	// AzureAuth is http.handlers.louter.auth.azure (package auth/azure).
	AzureAuth = azure.Auth
	// GoogleAuth is http.handlers.louter.auth.google (package auth/google).
	GoogleAuth = google.Auth
	// RedactFilter is caddy.logging.encoders.filter.louter_redact
	// (package logfilter).
	RedactFilter = logfilter.Redact
)
