package awssigv4

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/louter/louter/caddymodule/auth"
)

// bedrockService is the SigV4 service name of Bedrock's runtime
// (bedrock-runtime signs as "bedrock"), the module's default.
const bedrockService = "bedrock"

func init() {
	caddy.RegisterModule(Auth{})
}

// Auth signs each backend request with AWS Signature Version 4, as AWS
// Bedrock (and every AWS API) requires. Credentials come from the AWS SDK
// for Go's default chain — environment variables (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), web identity
// (AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, as on EKS), the shared
// config and credentials files and their profiles (assume-role, SSO,
// credential_process), container credentials (ECS, EKS Pod Identity) and
// the EC2 instance metadata service — or from static keys given here. The
// SDK caches temporary credentials and refreshes them before they expire.
//
// The signature covers the method, the path, the query, the body's
// SHA-256 and the headers the request carries when it is signed, which is
// last, inside the credential transport, after reverse_proxy has set its
// own headers (so the Host sent, the upstream's over TLS or what
// header_up Host names, is covered too) — except those a proxy on the way adds
// or rewrites (unsignedHeaders: Via, Forwarded, X-Forwarded-*, X-Real-Ip,
// Accept-Encoding), which AWS reads unsigned: an egress proxy that
// appends itself to Via would otherwise break every signature. Headers
// with '_' in their names are removed first: proxies in front of AWS drop
// them, which would break the signature.
//
// Caddyfile:
//
//	auth aws_sigv4 {
//		region            <region>
//		service           <name>
//		profile           <name>
//		access_key_id     <id>
//		secret_access_key <secret>
//		session_token     <token>
//	}
type Auth struct {
	// The AWS region of the endpoint, such as us-east-1: the region the
	// signature is scoped to, which must be the region of the host the
	// backend's reverse_proxy calls (bedrock-runtime.{region}.amazonaws.com).
	// Empty: the region of the SDK's configuration (AWS_REGION,
	// AWS_DEFAULT_REGION, the profile's region); provisioning fails when
	// there is none.
	Region string `json:"region,omitempty"`

	// The service name the signature is scoped to. Default: bedrock (the
	// name bedrock-runtime signs with).
	Service string `json:"service,omitempty"`

	// The shared-config profile to take credentials (and the region) from,
	// instead of AWS_PROFILE or "default".
	Profile string `json:"profile,omitempty"`

	// Static credentials, instead of the default chain: the access key id
	// and secret access key, both or neither, and for temporary
	// credentials the session token. Use placeholders ({env.AWS_SECRET},
	// {file./run/secrets/aws}): a key written in the configuration is
	// saved by Caddy's autosave and served by its admin API.
	AccessKeyID     string `json:"access_key_id,omitempty"`
	SecretAccessKey string `json:"secret_access_key,omitempty"`
	SessionToken    string `json:"session_token,omitempty"`

	region, service string
	creds           aws.CredentialsProvider
	signer          *v4.Signer
	// signed holds the credentials of the latest signature, for Secrets
	// (a pointer: Auth is a module value, copied before it is provisioned).
	signed *atomic.Pointer[aws.Credentials]
	// now is the signing clock; tests move it.
	now func() time.Time
}

// CaddyModule returns the Caddy module information.
func (Auth) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.louter.auth.aws_sigv4",
		New: func() caddy.Module { return new(Auth) },
	}
}

// awsRegionPattern is the form of an AWS region name (us-east-1,
// us-gov-west-1, ap-southeast-4, eusc-de-east-1).
var awsRegionPattern = regexp.MustCompile(`^[a-z]{2,5}(-[a-z]+)+-[0-9]{1,2}$`)

// Provision resolves the placeholders and sets up the credential chain. It
// fetches no credentials: the chain is asked on the first request, so a
// server starts even while the metadata service is unreachable.
func (a *Auth) Provision(ctx caddy.Context) error {
	repl := caddy.NewReplacer()
	for _, f := range []*string{&a.AccessKeyID, &a.SecretAccessKey, &a.SessionToken} {
		if v := repl.ReplaceAll(*f, ""); v != *f {
			*f = v
		} else if v != "" {
			ctx.Logger().Warn("an AWS credential is written in the configuration; use a placeholder such as {env.AWS_SECRET_ACCESS_KEY}")
		}
	}
	a.Region = repl.ReplaceAll(a.Region, "")
	a.Profile = repl.ReplaceAll(a.Profile, "")
	return a.setup(ctx)
}

// setup loads the SDK's configuration; Provision's work without Caddy.
func (a *Auth) setup(ctx context.Context) error {
	if (a.AccessKeyID == "") != (a.SecretAccessKey == "") {
		return errors.New("aws_sigv4: access_key_id and secret_access_key go together (one of them is empty; is its placeholder's variable set?)")
	}
	if a.SessionToken != "" && a.AccessKeyID == "" {
		return errors.New("aws_sigv4: session_token needs access_key_id and secret_access_key")
	}
	if a.Region != "" && !awsRegionPattern.MatchString(a.Region) {
		return fmt.Errorf("aws_sigv4: region %q is not an AWS region name such as us-east-1", a.Region)
	}
	opts := []func(*config.LoadOptions) error{config.WithRegion(a.Region)}
	if a.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(a.Profile))
	}
	if a.AccessKeyID != "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(a.AccessKeyID, a.SecretAccessKey, a.SessionToken)))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return fmt.Errorf("aws_sigv4: loading the AWS configuration: %w", err)
	}
	a.region = cfg.Region
	if a.region == "" {
		return errors.New("aws_sigv4: no region: set region, or AWS_REGION, or a region in the profile")
	}
	if !awsRegionPattern.MatchString(a.region) {
		return fmt.Errorf("aws_sigv4: region %q (from the AWS configuration) is not an AWS region name such as us-east-1", a.region)
	}
	if cfg.Credentials == nil {
		return errors.New("aws_sigv4: the AWS configuration has no credential source")
	}
	a.creds = cfg.Credentials // LoadDefaultConfig wraps the chain in aws.CredentialsCache
	a.service = a.Service
	if a.service == "" {
		a.service = bedrockService
	}
	a.signer = v4.NewSigner()
	a.signed = new(atomic.Pointer[aws.Credentials])
	if a.now == nil {
		a.now = time.Now
	}
	return nil
}

// Authorize implements BackendAuth: it signs req, body included.
func (a *Auth) Authorize(req *http.Request) error {
	for name := range req.Header {
		if strings.ContainsRune(name, '_') {
			delete(req.Header, name)
		}
	}
	hash, err := bodySHA256(req)
	if err != nil {
		return fmt.Errorf("aws_sigv4: reading the request body: %w", err)
	}
	creds, err := a.creds.Retrieve(req.Context())
	if err != nil {
		return fmt.Errorf("aws_sigv4: resolving AWS credentials: %w", err)
	}
	// A signature from an earlier attempt would be signed over again.
	req.Header.Del("Authorization")
	req.Header.Del("X-Amz-Date")
	req.Header.Del("X-Amz-Security-Token")
	// The signer signs every header it finds: those a proxy may rewrite
	// are taken out while it signs, and put back.
	var aside http.Header
	for name, v := range req.Header {
		if unsignedHeader(name) {
			if aside == nil {
				aside = make(http.Header)
			}
			aside[name] = v
			delete(req.Header, name)
		}
	}
	err = a.signer.SignHTTP(req.Context(), creds, req, hash, a.service, a.region, a.now().UTC())
	maps.Copy(req.Header, aside)
	if err != nil {
		return fmt.Errorf("aws_sigv4: signing: %w", err)
	}
	a.signed.Store(&creds)
	return nil
}

// unsignedHeader reports whether the header named (canonically) is left
// out of the signature: one that a proxy between louter and AWS adds to or
// rewrites (the proxy chain's Via, Forwarded and X-Forwarded-*,
// X-Real-Ip; Accept-Encoding, which a proxy that compresses may change).
// AWS verifies only the headers SignedHeaders names, so these reach it
// unsigned and harmless; signed, a proxy's edit would fail the request
// with "the request signature we calculated does not match".
func unsignedHeader(name string) bool {
	switch name {
	case "Via", "Forwarded", "X-Real-Ip", "Accept-Encoding":
		return true
	}
	return strings.HasPrefix(name, "X-Forwarded-")
}

// Secrets implements auth.SecretSource: the access key id and session
// token req was signed with, which a backend may echo in an error ("The
// security token included in the request is invalid", with the token), and
// the secret access key of the latest signature, which no request carries
// but which is scrubbed all the same.
func (a *Auth) Secrets(req *http.Request) []string {
	var out []string
	if _, cred, ok := strings.Cut(req.Header.Get("Authorization"), "Credential="); ok {
		if id, _, ok := strings.Cut(cred, "/"); ok {
			out = append(out, id)
		}
	}
	if tok := req.Header.Get("X-Amz-Security-Token"); tok != "" {
		out = append(out, tok)
	}
	if c := a.signed.Load(); c != nil {
		out = append(out, c.SecretAccessKey)
	}
	return out
}

// bodySHA256 returns the hex SHA-256 of req's body. louter's backend
// requests hold their body in memory and give GetBody (setBody), which
// is read, leaving req.Body for the transport; a body without GetBody is
// read and replaced.
func bodySHA256(req *http.Request) (string, error) {
	h := sha256.New()
	switch {
	case req.Body == nil || req.Body == http.NoBody:
	case req.GetBody != nil:
		rc, err := req.GetBody()
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, rc)
		rc.Close()
		if err != nil {
			return "", err
		}
	default:
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return "", err
		}
		h.Write(b)
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.ContentLength = int64(len(b))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// UnmarshalCaddyfile sets up the module from Caddyfile tokens; the
// dispenser is on the method's name.
func (a *Auth) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the method's name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		field := map[string]*string{
			"region": &a.Region, "service": &a.Service, "profile": &a.Profile,
			"access_key_id": &a.AccessKeyID, "secret_access_key": &a.SecretAccessKey, "session_token": &a.SessionToken,
		}[d.Val()]
		if field == nil {
			return d.Errf("aws_sigv4: unknown subdirective %q (known: region, service, profile, access_key_id, secret_access_key, session_token)", d.Val())
		}
		if !d.AllArgs(field) {
			return d.ArgErr()
		}
	}
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner     = (*Auth)(nil)
	_ caddyfile.Unmarshaler = (*Auth)(nil)
	_ auth.BackendAuth      = (*Auth)(nil)
	_ auth.SecretSource     = (*Auth)(nil)
)
