package cloudmock

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Entra ID test identities.
const (
	AzureTenant       = "00000000-0000-0000-0000-00000000a2e1"
	AzureClientID     = "11111111-2222-3333-4444-555555555555"
	AzureCognitiveScp = "https://cognitiveservices.azure.com/.default"
	AzureFoundryScope = "https://ai.azure.com/.default"
)

// Azure is a Microsoft Entra ID authority over TLS (MSAL insists on
// HTTPS): the tenant's OpenID configuration and its v2.0 token endpoint,
// which grants client_credentials to one client and secret, for the
// Cognitive Services scope.
type Azure struct {
	URL    string // https://127.0.0.1:N
	Secret string // the client secret it accepts
	srv    *httptest.Server

	mu      sync.Mutex
	tokens  map[string]time.Time
	issued  int
	refused []string
}

// NewAzure starts an authority accepting secret; it stops with the test.
func NewAzure(t testing.TB, secret string) *Azure {
	t.Helper()
	a := &Azure{Secret: secret, tokens: map[string]time.Time{}}
	a.srv = httptest.NewTLSServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	a.URL = a.srv.URL
	return a
}

// Client is an HTTP client that trusts the authority's certificate.
func (a *Azure) Client() *http.Client { return a.srv.Client() }

// Valid reports whether tok is an unexpired token the authority issued.
func (a *Azure) Valid(tok string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.tokens[tok]
	return ok && time.Now().Before(exp)
}

// IssuedCount is how many tokens the authority issued.
func (a *Azure) IssuedCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.issued
}

// Refused returns why token requests were refused.
func (a *Azure) Refused() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.refused...)
}

func (a *Azure) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	base := a.URL + "/" + AzureTenant
	switch r.URL.Path {
	case "/" + AzureTenant + "/v2.0/.well-known/openid-configuration":
		_ = json.NewEncoder(w).Encode(map[string]any{
			"token_endpoint":                        base + "/oauth2/v2.0/token",
			"authorization_endpoint":                base + "/oauth2/v2.0/authorize",
			"issuer":                                base + "/v2.0",
			"tenant_region_scope":                   "NA",
			"response_types_supported":              []string{"code", "id_token", "token"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_post"},
		})
	case "/" + AzureTenant + "/oauth2/v2.0/token":
		_ = r.ParseForm()
		f := r.PostForm
		why := ""
		switch {
		case f.Get("grant_type") != "client_credentials":
			why = "grant_type " + f.Get("grant_type")
		case f.Get("client_id") != AzureClientID:
			why = "client_id " + f.Get("client_id")
		case f.Get("client_secret") != a.Secret:
			why = "wrong client_secret"
		case !strings.Contains(" "+f.Get("scope")+" ", " "+AzureCognitiveScp+" ") && !strings.Contains(" "+f.Get("scope")+" ", " "+AzureFoundryScope+" "):
			why = "scope " + f.Get("scope")
		}
		if why != "" {
			a.mu.Lock()
			a.refused = append(a.refused, why)
			a.mu.Unlock()
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": "invalid_client", "error_description": "AADSTS7000215: " + why})
			return
		}
		a.mu.Lock()
		a.issued++
		tok := fmt.Sprintf("entra-louter-test-%d", a.issued)
		a.tokens[tok] = time.Now().Add(time.Hour)
		a.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": tok})
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":"not_found"}`))
	}
}
