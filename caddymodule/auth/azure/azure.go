package azure

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/louter/louter/caddymodule/auth"
	"github.com/louter/louter/caddymodule/internal/testhook"
)

func init() {
	caddy.RegisterModule(Auth{})
}

// azureCognitiveScope is the Entra ID scope of Azure OpenAI.
const azureCognitiveScope = "https://cognitiveservices.azure.com/.default"

// Auth authenticates a backend's requests with a Microsoft Entra ID
// bearer token (Azure OpenAI, Claude in Azure AI Foundry), obtained,
// cached and refreshed by Azure's identity library (azidentity): a service
// principal's client secret, a managed identity, AKS workload identity, or
// azidentity's default chain. louter asks it for the token on each
// attempt and sends it as Authorization: Bearer, below reverse_proxy's
// logs. An Azure api-key needs no module: it is the backend's api_key.
//
// Caddyfile:
//
//	auth azure {
//		credential    client_secret|managed_identity|workload_identity|default
//		tenant_id     <id>
//		client_id     <id>
//		client_secret <secret>
//		token_file    <path>
//		authority_host <url>
//		disable_instance_discovery
//		scopes        <scope...>
//	}
type Auth struct {
	// Which credential: "client_secret" (a service principal: tenant_id,
	// client_id, client_secret), "managed_identity" (the identity of the
	// VM, App Service or container; client_id picks a user-assigned one),
	// "workload_identity" (AKS: tenant_id, client_id and token_file, by
	// default from AZURE_TENANT_ID, AZURE_CLIENT_ID and
	// AZURE_FEDERATED_TOKEN_FILE) or "default" (azidentity's chain:
	// environment, workload identity, managed identity, Azure CLI).
	// Default: client_secret when client_secret is set, else default.
	Credential string `json:"credential,omitempty"`

	// The Entra tenant (directory) ID.
	TenantID string `json:"tenant_id,omitempty"`

	// The application (client) ID, or a user-assigned managed identity's
	// client ID.
	ClientID string `json:"client_id,omitempty"`

	// The client secret, for client_secret; use a placeholder such as
	// {env.AZURE_CLIENT_SECRET} or {file./run/secrets/azure}, resolved at
	// provision, never the secret itself.
	ClientSecret string `json:"client_secret,omitempty"`

	// The federated token file, for workload_identity. Default:
	// AZURE_FEDERATED_TOKEN_FILE.
	TokenFile string `json:"token_file,omitempty"`

	// The Entra authority, for a sovereign cloud
	// (https://login.microsoftonline.us/) or Azure Stack. Default: the
	// public cloud's, https://login.microsoftonline.com/.
	AuthorityHost string `json:"authority_host,omitempty"`

	// Skip the instance discovery request to the public authority, which
	// an authority of a disconnected cloud (Azure Stack) cannot answer.
	DisableInstanceDiscovery bool `json:"disable_instance_discovery,omitempty"`

	// The scopes the token is asked for. Default:
	// https://cognitiveservices.azure.com/.default (Azure OpenAI); Claude
	// in Azure AI Foundry takes https://ai.azure.com/.default.
	Scopes []string `json:"scopes,omitempty"`

	cred   azcore.TokenCredential
	scopes []string
}

// CaddyModule returns the Caddy module information.
func (Auth) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.louter.auth.azure",
		New: func() caddy.Module { return new(Auth) },
	}
}

// Provision builds the credential; it obtains no token yet.
func (a *Auth) Provision(caddy.Context) error {
	repl := caddy.NewReplacer()
	tenant := repl.ReplaceAll(a.TenantID, "")
	client := repl.ReplaceAll(a.ClientID, "")
	secret := repl.ReplaceAll(a.ClientSecret, "")
	tokenFile := repl.ReplaceAll(a.TokenFile, "")
	a.scopes = a.Scopes
	if len(a.scopes) == 0 {
		a.scopes = []string{azureCognitiveScope}
	}
	opts := azcore.ClientOptions{Transport: testhook.AzureTransport}
	if a.AuthorityHost != "" {
		host := repl.ReplaceAll(a.AuthorityHost, "")
		if !strings.HasPrefix(host, "https://") {
			return fmt.Errorf("auth azure: authority_host %q must be an https URL", host)
		}
		opts.Cloud = cloud.Configuration{ActiveDirectoryAuthorityHost: host}
	}
	kind := a.Credential
	if kind == "" {
		kind = "default"
		if a.ClientSecret != "" {
			kind = "client_secret"
		}
	}
	var err error
	switch kind {
	case "client_secret":
		if tenant == "" || client == "" || secret == "" {
			return fmt.Errorf("auth azure: client_secret needs tenant_id, client_id and client_secret (an unset placeholder yields none)")
		}
		a.cred, err = azidentity.NewClientSecretCredential(tenant, client, secret, &azidentity.ClientSecretCredentialOptions{
			ClientOptions: opts, DisableInstanceDiscovery: a.DisableInstanceDiscovery,
		})
	case "managed_identity":
		mo := &azidentity.ManagedIdentityCredentialOptions{ClientOptions: opts}
		if client != "" {
			mo.ID = azidentity.ClientID(client)
		}
		a.cred, err = azidentity.NewManagedIdentityCredential(mo)
	case "workload_identity":
		a.cred, err = azidentity.NewWorkloadIdentityCredential(&azidentity.WorkloadIdentityCredentialOptions{
			ClientOptions: opts, TenantID: tenant, ClientID: client, TokenFilePath: tokenFile,
			DisableInstanceDiscovery: a.DisableInstanceDiscovery,
		})
	case "default":
		a.cred, err = azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{
			ClientOptions: opts, TenantID: tenant, DisableInstanceDiscovery: a.DisableInstanceDiscovery,
		})
	default:
		return fmt.Errorf("auth azure: credential %q: want client_secret, managed_identity, workload_identity or default", kind)
	}
	if err != nil {
		return fmt.Errorf("auth azure: %s credential: %w", kind, err)
	}
	return nil
}

// Authorize implements BackendAuth: the current token, from azidentity's
// cache (refreshed before it expires).
func (a *Auth) Authorize(req *http.Request) error {
	tok, err := a.cred.GetToken(req.Context(), policy.TokenRequestOptions{Scopes: a.scopes})
	if err != nil {
		return fmt.Errorf("auth azure: obtaining an Entra ID token: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	return nil
}

// Secrets implements auth.SecretSource: the Entra ID token Authorize set on
// req, which a backend may echo in an error.
func (a *Auth) Secrets(req *http.Request) []string {
	return []string{auth.BearerToken(req)}
}

// UnmarshalCaddyfile sets up the module from Caddyfile tokens; the
// dispenser is on the method name ("azure").
func (a *Auth) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the method name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		var dst *string
		switch d.Val() {
		case "credential":
			dst = &a.Credential
		case "tenant_id":
			dst = &a.TenantID
		case "client_id":
			dst = &a.ClientID
		case "client_secret":
			dst = &a.ClientSecret
		case "token_file":
			dst = &a.TokenFile
		case "authority_host":
			dst = &a.AuthorityHost
		case "disable_instance_discovery":
			if d.NextArg() {
				return d.ArgErr()
			}
			a.DisableInstanceDiscovery = true
			continue
		case "scopes":
			a.Scopes = append(a.Scopes, d.RemainingArgs()...)
			if len(a.Scopes) == 0 {
				return d.ArgErr()
			}
			continue
		default:
			return d.Errf("unrecognized auth azure setting '%s'", d.Val())
		}
		if !d.AllArgs(dst) {
			return d.ArgErr()
		}
	}
	return nil
}

// Interface guards
var (
	_ auth.BackendAuth      = (*Auth)(nil)
	_ auth.SecretSource     = (*Auth)(nil)
	_ caddy.Provisioner     = (*Auth)(nil)
	_ caddyfile.Unmarshaler = (*Auth)(nil)
)
