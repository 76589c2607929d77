package translate

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

func TestAnthropicDecodeError(t *testing.T) {
	long := strings.Repeat("é", 2000)
	tests := []struct {
		name   string
		status int
		body   string
		want   Error
	}{
		{
			name: "anthropic envelope", status: 529,
			body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`,
			want: Error{Status: 529, Kind: ErrOverloaded, Message: "Overloaded"},
		},
		{
			name: "type wins over status", status: 400,
			body: `{"type":"error","error":{"type":"request_too_large","message":"too big"}}`,
			want: Error{Status: 400, Kind: ErrRequestTooLarge, Message: "too big"},
		},
		{
			name: "unknown type falls back to status", status: 429,
			body: `{"type":"error","error":{"type":"brand_new_error","message":"slow down"}}`,
			want: Error{Status: 429, Kind: ErrRateLimit, Message: "slow down"},
		},
		{
			name: "openai shape with code", status: 401,
			body: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			want: Error{Status: 401, Kind: ErrAuthentication, Message: "Incorrect API key provided", Code: "invalid_api_key"},
		},
		{
			name: "error string", status: 404,
			body: `{"error":"model 'x' not found"}`,
			want: Error{Status: 404, Kind: ErrNotFound, Message: "model 'x' not found"},
		},
		{
			name: "detail", status: 422,
			body: `{"detail":"Field required"}`,
			want: Error{Status: 422, Kind: ErrInvalidRequest, Message: "Field required"},
		},
		{
			name: "unknown object", status: 500,
			body: `{"oops":true}`,
			want: Error{Status: 500, Kind: ErrAPI, Message: `{"oops":true}`},
		},
		{
			name: "plain text", status: 502,
			body: "  <html>Bad Gateway</html>\n",
			want: Error{Status: 502, Kind: ErrAPI, Message: "<html>Bad Gateway</html>"},
		},
		{
			name: "empty body", status: 503,
			body: "",
			want: Error{Status: 503, Kind: ErrOverloaded, Message: "Service Unavailable"},
		},
		{
			name: "no status, known type", status: 0,
			body: `{"type":"error","error":{"type":"rate_limit_error","message":"r"}}`,
			want: Error{Status: 429, Kind: ErrRateLimit, Message: "r"},
		},
		{
			name: "no status, unknown type", status: 0,
			body: `{"type":"error","error":{"type":"weird","message":"w"}}`,
			want: Error{Status: 500, Kind: ErrAPI, Message: "w"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := anthropicCodec{}.DecodeError(tt.status, []byte(tt.body))
			if *got != tt.want {
				t.Errorf("got %+v, want %+v", *got, tt.want)
			}
		})
	}

	t.Run("long text is cut on a rune boundary", func(t *testing.T) {
		got := anthropicCodec{}.DecodeError(500, []byte(long))
		if len(got.Message) > anthMaxErrorMessage+len("…") || !utf8.ValidString(got.Message) || !strings.HasSuffix(got.Message, "…") {
			t.Errorf("message of %d bytes, valid UTF-8 %v", len(got.Message), utf8.ValidString(got.Message))
		}
	})
}

func TestAnthropicEncodeError(t *testing.T) {
	c := anthropicCodec{}
	for kind, typ := range anthErrorTypes {
		e := &Error{Status: StatusForKind(kind), Kind: kind, Message: `say "hi" <now>`}
		body := c.EncodeError(e)
		if got := gjson.GetBytes(body, "error.type").Str; got != typ {
			t.Errorf("%s: error.type = %q, want %q", kind, got, typ)
		}
		if got := gjson.GetBytes(body, "type").Str; got != "error" {
			t.Errorf("%s: type = %q", kind, got)
		}
		// What we write, we read back identically.
		back := c.DecodeError(e.Status, body)
		if *back != *e {
			t.Errorf("%s: round trip %+v, want %+v", kind, *back, *e)
		}
	}
	body := c.EncodeError(&Error{Status: 404, Message: "no kind"})
	if got := string(body); got != `{"type":"error","error":{"type":"not_found_error","message":"no kind"}}` {
		t.Errorf("kind from status: %s", got)
	}
	if got := gjson.GetBytes(c.EncodeError(nil), "error.type").Str; got != "api_error" {
		t.Errorf("nil error: %q", got)
	}
}
