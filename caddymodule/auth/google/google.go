package google

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	louterauth "github.com/louter/louter/caddymodule/auth"
)

func init() {
	caddy.RegisterModule(Auth{})
}

// googleCloudPlatformScope is the OAuth2 scope of Vertex AI.
const googleCloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// Auth authenticates a backend's requests with an OAuth2 access token
// from Google's credentials (Vertex AI): Application Default Credentials —
// the file GOOGLE_APPLICATION_CREDENTIALS names, gcloud's application
// default credentials, or the metadata server of GCE, GKE (workload
// identity) and Cloud Run — or a credentials file of its own. Google's auth
// library (cloud.google.com/go/auth) signs the service account's JWT
// assertion, exchanges it, caches the token and refreshes it before it
// expires; louter only asks it for the current token on each attempt and
// sends it as Authorization: Bearer, below reverse_proxy's logs. Neither the
// key nor the token is ever logged.
//
// Caddyfile:
//
//	auth google {
//		credentials_file <path>
//		scopes           <scope...>
//		quota_project    <project>
//	}
type Auth struct {
	// A credentials JSON file: a service account key ("service_account"),
	// a workload identity federation configuration ("external_account"),
	// a user's credentials ("authorized_user") or an impersonation
	// configuration ("impersonated_service_account"). Empty: Application
	// Default Credentials. Placeholders such as {env.VERTEX_KEY_FILE} are
	// resolved at provision.
	CredentialsFile string `json:"credentials_file,omitempty"`

	// The OAuth2 scopes the token is asked for. Default:
	// https://www.googleapis.com/auth/cloud-platform, which Vertex AI
	// needs (workload identity federation mints no token without one).
	Scopes []string `json:"scopes,omitempty"`

	// The project billed for quota, sent as X-Goog-User-Project. Default:
	// the credentials' own quota project, if they name one.
	QuotaProject string `json:"quota_project,omitempty"`

	creds        *auth.Credentials
	quotaProject string
}

// CaddyModule returns the Caddy module information.
func (Auth) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.louter.auth.google",
		New: func() caddy.Module { return new(Auth) },
	}
}

// googleFileTypes are the credentials file types louter accepts: those a
// server can use without a person present.
var googleFileTypes = map[string]credentials.CredType{
	string(credentials.ServiceAccount):             credentials.ServiceAccount,
	string(credentials.ExternalAccount):            credentials.ExternalAccount,
	string(credentials.AuthorizedUser):             credentials.AuthorizedUser,
	string(credentials.ImpersonatedServiceAccount): credentials.ImpersonatedServiceAccount,
}

// Provision loads the credentials; it obtains no token yet.
func (g *Auth) Provision(ctx caddy.Context) error {
	scopes := g.Scopes
	if len(scopes) == 0 {
		scopes = []string{googleCloudPlatformScope}
	}
	opts := &credentials.DetectOptions{Scopes: scopes}
	repl := caddy.NewReplacer()
	file := repl.ReplaceAll(g.CredentialsFile, "")
	var err error
	if file == "" {
		g.creds, err = credentials.DetectDefault(opts)
		if err != nil {
			return fmt.Errorf("auth google: no Application Default Credentials (set GOOGLE_APPLICATION_CREDENTIALS or credentials_file, or run on Google Cloud): %w", err)
		}
	} else {
		g.creds, err = googleCredentialsFromFile(file, opts)
		if err != nil {
			return err
		}
	}
	g.quotaProject = repl.ReplaceAll(g.QuotaProject, "")
	if g.quotaProject == "" {
		g.quotaProject, _ = g.creds.QuotaProjectID(ctx)
	}
	return nil
}

// googleCredentialsFromFile loads a credentials file of a type louter
// accepts. The library is told the type, rather than trusting the file's
// (its warning about externally supplied configurations); the errors never
// quote the file's content.
func googleCredentialsFromFile(file string, opts *credentials.DetectOptions) (*auth.Credentials, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("auth google: reading credentials_file: %w", err)
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("auth google: credentials_file %s is not JSON", file)
	}
	typ, ok := googleFileTypes[head.Type]
	if !ok {
		return nil, fmt.Errorf("auth google: credentials_file %s has type %q; want service_account, external_account, authorized_user or impersonated_service_account", file, head.Type)
	}
	creds, err := credentials.NewCredentialsFromJSON(typ, b, opts)
	if err != nil {
		return nil, fmt.Errorf("auth google: credentials_file %s: %w", file, err)
	}
	return creds, nil
}

// Authorize implements BackendAuth: the current access token, from the
// library's cache (refreshed in the background before it expires).
func (g *Auth) Authorize(req *http.Request) error {
	tok, err := g.creds.Token(req.Context())
	if err != nil {
		return fmt.Errorf("auth google: obtaining an access token: %w", err)
	}
	typ := tok.Type
	if typ == "" {
		typ = "Bearer"
	}
	req.Header.Set("Authorization", typ+" "+tok.Value)
	if g.quotaProject != "" {
		req.Header.Set("X-Goog-User-Project", g.quotaProject)
	}
	return nil
}

// Secrets implements louterauth.SecretSource: the access token Authorize set on
// req, which a backend may echo in an error.
func (g *Auth) Secrets(req *http.Request) []string {
	return []string{louterauth.BearerToken(req)}
}

// UnmarshalCaddyfile sets up the module from Caddyfile tokens; the
// dispenser is on the method name ("google").
func (g *Auth) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the method name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "credentials_file":
			if !d.AllArgs(&g.CredentialsFile) {
				return d.ArgErr()
			}
		case "scopes":
			g.Scopes = append(g.Scopes, d.RemainingArgs()...)
			if len(g.Scopes) == 0 {
				return d.ArgErr()
			}
		case "quota_project":
			if !d.AllArgs(&g.QuotaProject) {
				return d.ArgErr()
			}
		default:
			return d.Errf("unrecognized auth google setting '%s'", d.Val())
		}
	}
	return nil
}

// Interface guards
var (
	_ louterauth.BackendAuth  = (*Auth)(nil)
	_ louterauth.SecretSource = (*Auth)(nil)
	_ caddy.Provisioner       = (*Auth)(nil)
	_ caddyfile.Unmarshaler   = (*Auth)(nil)
)
