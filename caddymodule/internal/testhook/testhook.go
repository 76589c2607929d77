// Package testhook holds what caddymodule's tests set so that a module
// living in a package of its own reaches a loopback stand-in of a cloud
// service; production leaves every one at its zero value. It is internal,
// so nothing outside caddymodule can set them.
package testhook

import "github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

// AzureTransport replaces azidentity's HTTP client in the auth azure
// modules provisioned after it is set (a loopback authority serves TLS with
// a certificate of its own); nil: the library's default.
var AzureTransport policy.Transporter
