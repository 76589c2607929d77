package logfilter

import (
	"net/http"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/louter/louter/caddymodule/internal/redact"
)

func TestRedactFilterHeaders(t *testing.T) {
	h := http.Header{
		"X-Api-Key": {"k1"}, "X-Goog-Api-Key": {"k2"}, "Api-Key": {"k3"}, "Anthropic-Api-Key": {"k4"},
		"Authorization": {"Bearer k5"}, "Cookie": {"k6"}, "Openai-Project": {"p"},
		"Accept": {"*/*"}, "X-Request-Id": {"r"},
	}
	// log_credentials on: Caddy would log them all; louter_redact still hides them.
	out := Redact{}.Filter(zap.Object("headers", caddyhttp.LoggableHTTPHeader{Header: h, ShouldLogCredentials: true}))
	enc := zapcore.NewMapObjectEncoder()
	out.AddTo(enc)
	got := enc.Fields["headers"].(map[string]any)
	for k := range h {
		want := redact.LogValue
		if !redact.IsCredentialHeader(k) {
			want = h.Get(k)
		}
		if v := got[k].([]any)[0]; v != want {
			t.Errorf("%s logged as %v, want %v", k, v, want)
		}
	}
	if h.Get("X-Api-Key") != "k1" {
		t.Error("the request's own header was changed")
	}
}

func TestRedactFilterURI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/v1beta/models/m:generateContent?key=abc", "/v1beta/models/m:generateContent?key=REDACTED"},
		{"/x?alt=sse&KEY=abc&Api_Key=d&b=%20", "/x?alt=sse&KEY=REDACTED&Api_Key=REDACTED&b=%20"},
		{"/x?access_token=t#frag", "/x?access_token=REDACTED#frag"},
		{"/v1/messages?beta=true", "/v1/messages?beta=true"},
		{"/v1/messages", "/v1/messages"},
	}
	for _, tt := range tests {
		out := Redact{}.Filter(zap.String("uri", tt.in))
		if out.String != tt.want {
			t.Errorf("%q logged as %q, want %q", tt.in, out.String, tt.want)
		}
	}
	// Other fields pass unchanged.
	if out := (Redact{}).Filter(zap.Int("status", 200)); out.Integer != 200 || out.Type != zapcore.Int64Type {
		t.Errorf("an int field changed: %+v", out)
	}
}

func TestRedactFilterCaddyfile(t *testing.T) {
	for in, ok := range map[string]bool{
		"louter_redact":          true,
		"louter_redact extra":    false,
		"louter_redact {\n x\n}": false,
	} {
		err := Redact{}.UnmarshalCaddyfile(caddyfile.NewTestDispenser(in))
		if (err == nil) != ok {
			t.Errorf("%q: %v", in, err)
		}
	}
}
