// Package cloudmock serves, on loopback, what louter's cloud backends
// talk to besides the model: a Google OAuth2 token endpoint for a service
// account key made at start, a Microsoft Entra ID authority, and a
// front (front.go) that checks the credentials and the cloud's URL and
// body shape the way Vertex AI and Azure OpenAI do, then hands the request,
// in the provider API's own shape, to a louter_mock. Nothing in it is
// mocked away: the token endpoint verifies the JWT assertion's RS256
// signature with the key's public half, and the front accepts only the
// tokens the endpoints issued, until they expire. It is for tests.
package cloudmock

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// ServiceAccountEmail is the client_email of the generated key.
const ServiceAccountEmail = "louter-test@test-project.iam.gserviceaccount.com"

// CloudPlatformScope is the scope the token endpoint requires.
const CloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// Google is a Google OAuth2 token endpoint (POST /token) for one service
// account, whose RSA key it generated.
type Google struct {
	URL string // the server's base URL
	key *rsa.PrivateKey

	// ExpiresIn is the lifetime of the tokens it issues, in seconds
	// (default 3600).
	ExpiresIn atomic.Int64

	mu      sync.Mutex
	tokens  map[string]time.Time // token → expiry
	issued  int
	refused []string // why assertions were refused
}

// NewGoogle starts a token endpoint; it stops with the test.
func NewGoogle(t testing.TB) *Google {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	g := &Google{key: key, tokens: map[string]time.Time{}}
	g.ExpiresIn.Store(3600)
	srv := httptest.NewServer(http.HandlerFunc(g.serveToken))
	t.Cleanup(srv.Close)
	g.URL = srv.URL
	return g
}

// CredentialsJSON is the service account key file, its token_uri the
// endpoint's.
func (g *Google) CredentialsJSON() []byte { return g.credentialsJSON(g.key) }

// WriteForeignCredentials writes a key file naming the same account and
// token endpoint with another key, whose assertions the endpoint refuses,
// and returns its path.
func (g *Google) WriteForeignCredentials(t testing.TB, dir string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "foreign-service-account.json")
	if err := os.WriteFile(path, g.credentialsJSON(key), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (g *Google) credentialsJSON(key *rsa.PrivateKey) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     "test-project",
		"private_key_id": "k1",
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   ServiceAccountEmail,
		"client_id":      "1234567890",
		"token_uri":      g.URL + "/token",
	})
	return b
}

// PrivateKeyPEMLine is a line of the key's PEM body, for tests that look
// for the key in what louter wrote.
func (g *Google) PrivateKeyPEMLine() string {
	var key struct {
		PrivateKey string `json:"private_key"`
	}
	_ = json.Unmarshal(g.CredentialsJSON(), &key)
	return strings.Split(key.PrivateKey, "\n")[3]
}

// WriteCredentials writes the key file into dir and returns its path.
func (g *Google) WriteCredentials(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "service-account.json")
	if err := os.WriteFile(path, g.CredentialsJSON(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Valid reports whether tok is a token the endpoint issued that has not
// expired.
func (g *Google) Valid(tok string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	exp, ok := g.tokens[tok]
	return ok && time.Now().Before(exp)
}

// Issued returns the tokens issued so far, in order.
func (g *Google) Issued() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, 0, len(g.tokens))
	for i := 1; i <= g.issued; i++ {
		out = append(out, googleToken(i))
	}
	return out
}

// Refused returns why assertions were refused.
func (g *Google) Refused() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.refused...)
}

func googleToken(n int) string { return fmt.Sprintf("ya29.louter-test-%d", n) }

func (g *Google) serveToken(w http.ResponseWriter, r *http.Request) {
	refuse := func(why string) {
		g.mu.Lock()
		g.refused = append(g.refused, why)
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": why})
	}
	if r.Method != http.MethodPost || r.URL.Path != "/token" {
		http.NotFound(w, r)
		return
	}
	if err := r.ParseForm(); err != nil {
		refuse("unparsable form")
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		refuse("grant_type " + gt)
		return
	}
	claims := jwt.MapClaims{}
	tok, err := jwt.ParseWithClaims(r.PostForm.Get("assertion"), claims, func(tok *jwt.Token) (any, error) {
		if kid, _ := tok.Header["kid"].(string); kid != "k1" {
			return nil, fmt.Errorf("kid %q", kid)
		}
		return &g.key.PublicKey, nil
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(ServiceAccountEmail),
		jwt.WithAudience(g.URL+"/token"), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	if err != nil || !tok.Valid {
		refuse(fmt.Sprintf("assertion: %v", err))
		return
	}
	if scope, _ := claims["scope"].(string); !strings.Contains(" "+scope+" ", " "+CloudPlatformScope+" ") {
		refuse("scope " + scope)
		return
	}
	ttl := g.ExpiresIn.Load()
	g.mu.Lock()
	g.issued++
	access := googleToken(g.issued)
	g.tokens[access] = time.Now().Add(time.Duration(ttl) * time.Second)
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": access, "expires_in": ttl, "token_type": "Bearer"})
}
