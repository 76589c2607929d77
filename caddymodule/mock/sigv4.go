package mock

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// BedrockAuth is what the mock's Bedrock endpoints accept: requests signed
// with SigV4 by these credentials, for this region, or a Bedrock API key
// as a bearer token. A Bedrock request to a mock without it is refused, so
// every test of a Bedrock backend proves its authentication.
type BedrockAuth struct {
	// The credentials requests must be signed with.
	AccessKeyID     string `json:"access_key_id,omitempty"`
	SecretAccessKey string `json:"secret_access_key,omitempty"`
	// The session token a request must carry (X-Amz-Security-Token), if
	// any.
	SessionToken string `json:"session_token,omitempty"`
	// The region of the signature's scope. Default: us-east-1.
	Region string `json:"region,omitempty"`
	// A Bedrock API key accepted as Authorization: Bearer instead.
	APIKey string `json:"api_key,omitempty"`
}

// maxSigV4Skew is how far a request's X-Amz-Date may be from the mock's
// clock, as AWS allows.
const maxSigV4Skew = 5 * time.Minute

// unsignedOK are the headers a signed request may carry unsigned: those
// the signer never signs, those Go's transport adds after signing, and
// those a proxy on the way adds or rewrites (Via, Forwarded, X-Real-Ip;
// X-Forwarded-* in unsignedHeader), which louter leaves unsigned.
var unsignedOK = map[string]bool{
	"Authorization": true, "User-Agent": true, "Accept-Encoding": true, "Content-Length": true,
	"X-Amzn-Trace-Id": true, "Expect": true, "Transfer-Encoding": true, "Connection": true,
	"Via": true, "Forwarded": true, "X-Real-Ip": true,
}

// unsignedAllowed reports whether a request may carry the header named
// (canonically) unsigned.
func unsignedAllowed(name string) bool {
	return unsignedOK[name] || strings.HasPrefix(name, "X-Forwarded-")
}

// VerifySigV4 checks r's AWS Signature Version 4 the way AWS does: it
// signs a copy of r holding only the headers the signature names, with the
// SDK's signer, the given credentials and the request's own X-Amz-Date,
// and compares the signatures. It also refuses a request whose date is more
// than five minutes from now, whose session token is not creds', or that
// carries a header the signature does not cover (besides those a
// transport adds). body is r's body, already read.
func VerifySigV4(r *http.Request, body []byte, creds aws.Credentials, service, region string, now time.Time) error {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return fmt.Errorf("missing or non-SigV4 Authorization header")
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		fields[k] = v
	}
	scope := strings.Split(fields["Credential"], "/")
	if len(scope) != 5 || scope[4] != "aws4_request" {
		return fmt.Errorf("malformed credential scope %q", fields["Credential"])
	}
	if scope[0] != creds.AccessKeyID {
		return fmt.Errorf("unknown access key id %q", scope[0])
	}
	if scope[2] != region || scope[3] != service {
		return fmt.Errorf("credential scope %s/%s, want %s/%s", scope[2], scope[3], region, service)
	}
	t, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("bad X-Amz-Date: %v", err)
	}
	if d := now.Sub(t); d > maxSigV4Skew || d < -maxSigV4Skew {
		return fmt.Errorf("signature expired: X-Amz-Date %s is %s from the server's time", t.Format(time.RFC3339), d.Round(time.Second))
	}
	if got := r.Header.Get("X-Amz-Security-Token"); got != creds.SessionToken {
		return fmt.Errorf("the security token included in the request is invalid")
	}
	signed := map[string]bool{}
	for _, name := range strings.Split(fields["SignedHeaders"], ";") {
		signed[name] = true
	}
	if !signed["host"] || !signed["x-amz-date"] {
		return fmt.Errorf("SignedHeaders %q must include host and x-amz-date", fields["SignedHeaders"])
	}
	for name := range r.Header {
		if !signed[strings.ToLower(name)] && !unsignedAllowed(name) {
			return fmt.Errorf("header %s is not signed", name)
		}
	}
	u := &url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	again, err := http.NewRequestWithContext(context.Background(), r.Method, u.String(), nil)
	if err != nil {
		return err
	}
	again.Host = r.Host
	again.ContentLength = int64(len(body))
	for name := range signed {
		if name == "host" || name == "content-length" {
			continue
		}
		again.Header[http.CanonicalHeaderKey(name)] = r.Header.Values(name)
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), service, region, t); err != nil {
		return err
	}
	if !hmac.Equal([]byte(again.Header.Get("Authorization")), []byte(auth)) {
		return fmt.Errorf("the request signature we calculated does not match the signature you provided")
	}
	return nil
}

// check authenticates a Bedrock request, returning why it is refused.
func (a *BedrockAuth) check(r *http.Request, body []byte) string {
	if a == nil {
		return "louter_mock: no bedrock credentials configured (bedrock_sigv4 or bedrock_api_key), so no Bedrock request can be verified"
	}
	if key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		if a.APIKey == "" || !hmac.Equal([]byte(key), []byte(a.APIKey)) {
			return "invalid Bedrock API key"
		}
		for name := range r.Header {
			if strings.HasPrefix(name, "X-Amz-") {
				return "a bearer request carries " + name
			}
		}
		return ""
	}
	if a.AccessKeyID == "" {
		return "SigV4 is not accepted by this mock (no bedrock_sigv4)"
	}
	region := a.Region
	if region == "" {
		region = "us-east-1"
	}
	creds := aws.Credentials{AccessKeyID: a.AccessKeyID, SecretAccessKey: a.SecretAccessKey, SessionToken: a.SessionToken}
	if err := VerifySigV4(r, body, creds, "bedrock", region, time.Now()); err != nil {
		return err.Error()
	}
	return ""
}
