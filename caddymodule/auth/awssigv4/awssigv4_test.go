package awssigv4

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/louter/louter/caddymodule/mock"
	"github.com/louter/louter/internal/cloudmock"
)

// signedRequest signs a request to a Bedrock path with a.
func signedRequest(t *testing.T, a *Auth, body string, header ...string) *http.Request {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "http://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-x-v1%3A0/invoke", nil)
	// As louter's request rewrite sets a body: readable once, and again
	// through GetBody, as a retry reads it.
	req.Body, req.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Session_id", "dropped: proxies in front of AWS drop snake_case headers")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if err := a.Authorize(req); err != nil {
		t.Fatal(err)
	}
	return req
}

// verify checks req's signature as the mock does (it reads what the
// server would: the raw path, the body).
func verify(req *http.Request, creds aws.Credentials, region string, now time.Time) error {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	srv := req.Clone(context.Background())
	srv.Host = req.URL.Host
	srv.Header.Set("Content-Length", "1") // Go's server keeps it; it is never signed
	return mock.VerifySigV4(srv, body, creds, "bedrock", region, now)
}

// TestAuthSignature: a request signed with static keys verifies; a
// wrong secret, a clock more than five minutes off, a tampered body, a
// header added after signing, and a wrong region each fail.
func TestAuthSignature(t *testing.T) {
	cloudmock.IsolateAWSEnv(t)
	creds := aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "s3cret", SessionToken: "tok"}
	a := &Auth{Region: "us-east-1", AccessKeyID: creds.AccessKeyID, SecretAccessKey: creds.SecretAccessKey, SessionToken: creds.SessionToken}
	if err := a.setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	req := signedRequest(t, a, `{"messages":[]}`)
	if req.Header.Get("Session_id") != "" || req.Header.Get("X-Amz-Security-Token") != "tok" {
		t.Errorf("headers %v", req.Header)
	}
	if err := verify(req, creds, "us-east-1", now); err != nil {
		t.Fatalf("a good signature failed: %v", err)
	}
	// What the scrubber is to hide: the credentials signed with.
	if got := a.Secrets(req); !slices.Equal(got, []string{"AKIDTEST", "tok", "s3cret"}) {
		t.Errorf("Secrets = %q", got)
	}
	for _, tt := range []struct {
		name   string
		change func(r *http.Request, c *aws.Credentials, region *string, now *time.Time)
		want   string
	}{
		{"wrong secret", func(_ *http.Request, c *aws.Credentials, _ *string, _ *time.Time) { c.SecretAccessKey = "other" }, "does not match"},
		{"clock skew", func(_ *http.Request, _ *aws.Credentials, _ *string, n *time.Time) { *n = n.Add(6 * time.Minute) }, "expired"},
		{"tampered body", func(r *http.Request, _ *aws.Credentials, _ *string, _ *time.Time) {
			r.Body = io.NopCloser(strings.NewReader(`{"messages":[1]}`))
		}, "does not match"},
		{"unsigned header", func(r *http.Request, _ *aws.Credentials, _ *string, _ *time.Time) { r.Header.Set("X-Extra", "1") }, "not signed"},
		{"changed signed header", func(r *http.Request, _ *aws.Credentials, _ *string, _ *time.Time) {
			r.Header.Set("Content-Type", "text/plain")
		}, "does not match"},
		{"wrong region", func(_ *http.Request, _ *aws.Credentials, region *string, _ *time.Time) { *region = "eu-west-1" }, "scope"},
		{"session token", func(_ *http.Request, c *aws.Credentials, _ *string, _ *time.Time) { c.SessionToken = "other" }, "security token"},
	} {
		r := signedRequest(t, a, `{"messages":[]}`)
		c, region, n := creds, "us-east-1", now
		tt.change(r, &c, &region, &n)
		if err := verify(r, c, region, n); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	// What a proxy between louter and AWS adds or rewrites after the
	// signature is not signed: the request still verifies.
	r := signedRequest(t, a, `{"messages":[]}`, "X-Forwarded-For", "192.0.2.1", "Via", "1.1 Caddy", "Forwarded", "for=192.0.2.1")
	if sh := r.Header.Get("Authorization"); strings.Contains(sh, "x-forwarded") || strings.Contains(sh, "via") || strings.Contains(sh, "forwarded") {
		t.Errorf("proxy headers signed: %s", sh)
	}
	if r.Header.Get("X-Forwarded-For") != "192.0.2.1" || r.Header.Get("Via") != "1.1 Caddy" {
		t.Errorf("proxy headers not sent: %v", r.Header)
	}
	r.Header.Set("X-Forwarded-For", "192.0.2.1, 198.51.100.7")
	r.Header.Add("Via", "1.1 egress-proxy")
	r.Header.Set("Forwarded", "for=198.51.100.7")
	r.Header.Set("X-Forwarded-Proto", "https")
	if err := verify(r, creds, "us-east-1", now); err != nil {
		t.Errorf("proxy headers rewritten after signing: %v", err)
	}
	// The signer's own clock off by ten minutes.
	a.now = func() time.Time { return time.Now().Add(-10 * time.Minute) }
	if err := verify(signedRequest(t, a, "{}"), creds, "us-east-1", now); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("skewed signer: %v", err)
	}
}

// TestAuthCredentialChain takes credentials from the default chain's
// container provider (EKS Pod Identity style), served on loopback with a
// short expiry: the SDK's cache reuses them while valid and fetches new
// ones once they expire, and each signature uses the current ones.
func TestAuthCredentialChain(t *testing.T) {
	cloudmock.IsolateAWSEnv(t)
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "pod-token" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		n := served.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]string{
			"AccessKeyId": "AKIDCHAIN", "SecretAccessKey": "chain-secret", "Token": "chain-token-" + string(rune('0'+n)),
			// The SDK refreshes container credentials five minutes
			// before they expire: these are due 1.5 s from now.
			"Expiration": time.Now().Add(5*time.Minute + 1500*time.Millisecond).UTC().Format(time.RFC3339Nano),
		})
	}))
	defer srv.Close()
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", srv.URL+"/creds")
	t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "pod-token")
	t.Setenv("AWS_REGION", "us-west-2")
	a := &Auth{}
	if err := a.setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a.region != "us-west-2" {
		t.Errorf("region %q from AWS_REGION", a.region)
	}
	creds := func(n int) aws.Credentials {
		return aws.Credentials{AccessKeyID: "AKIDCHAIN", SecretAccessKey: "chain-secret", SessionToken: "chain-token-" + string(rune('0'+n))}
	}
	for range 2 {
		if err := verify(signedRequest(t, a, "{}"), creds(1), "us-west-2", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if served.Load() != 1 {
		t.Errorf("credentials fetched %d times for two requests, want 1 (cached)", served.Load())
	}
	time.Sleep(1600 * time.Millisecond)
	if err := verify(signedRequest(t, a, "{}"), creds(2), "us-west-2", time.Now()); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
}

// TestAuthConfig: the Caddyfile form, and the errors provisioning
// gives for a half-configured module.
func TestAuthConfig(t *testing.T) {
	cloudmock.IsolateAWSEnv(t)
	d := caddyfile.NewTestDispenser(`aws_sigv4 {
		region eu-central-1
		profile team
		access_key_id {env.AK}
		secret_access_key {env.SK}
		session_token {env.ST}
		service bedrock
	}`)
	var a Auth
	if err := a.UnmarshalCaddyfile(d); err != nil {
		t.Fatal(err)
	}
	want := Auth{Region: "eu-central-1", Profile: "team", AccessKeyID: "{env.AK}", SecretAccessKey: "{env.SK}", SessionToken: "{env.ST}", Service: "bedrock"}
	if a.Region != want.Region || a.Profile != want.Profile || a.AccessKeyID != want.AccessKeyID || a.SecretAccessKey != want.SecretAccessKey || a.SessionToken != want.SessionToken || a.Service != want.Service {
		t.Errorf("parsed %+v", a)
	}
	if err := new(Auth).UnmarshalCaddyfile(caddyfile.NewTestDispenser("aws_sigv4 {\n regoin x\n}")); err == nil || !strings.Contains(err.Error(), "unknown subdirective") {
		t.Errorf("typo: %v", err)
	}
	for _, tt := range []struct {
		a    Auth
		want string
	}{
		{Auth{Region: "us-east-1", AccessKeyID: "AK"}, "go together"},
		{Auth{Region: "us-east-1", SessionToken: "t"}, "session_token needs"},
		{Auth{Region: "US East"}, "not an AWS region"},
		{Auth{AccessKeyID: "AK", SecretAccessKey: "SK"}, "no region"},
		{Auth{Region: "us-east-1", Profile: "missing"}, "loading the AWS configuration"},
	} {
		if err := tt.a.setup(context.Background()); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.a, err, tt.want)
		}
	}
}
