package translate

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestOpenAIChatDecodeError(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   Error
	}{
		{"openai envelope", 400, `{"error":{"message":"Invalid 'messages[1].content'","type":"invalid_request_error","param":"messages[1].content","code":null}}`,
			Error{Status: 400, Kind: ErrInvalidRequest, Message: "Invalid 'messages[1].content'", Param: "messages[1].content"}},
		{"bad key", 401, `{"error":{"message":"Incorrect API key provided: sk-...","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			Error{Status: 401, Kind: ErrAuthentication, Message: "Incorrect API key provided: sk-...", Code: "invalid_api_key"}},
		{"quota is billing despite 429", 429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			Error{Status: 429, Kind: ErrBilling, Message: "You exceeded your current quota", Code: "insufficient_quota"}},
		{"rate limit", 429, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			Error{Status: 429, Kind: ErrRateLimit, Message: "Rate limit reached", Code: "rate_limit_exceeded"}},
		{"model not found", 404, `{"error":{"message":"The model 'gpt-9' does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
			Error{Status: 404, Kind: ErrNotFound, Message: "The model 'gpt-9' does not exist", Code: "model_not_found"}},
		{"ollama string error", 404, `{"error":"model \"llama9\" not found, try pulling it first"}`,
			Error{Status: 404, Kind: ErrNotFound, Message: `model "llama9" not found, try pulling it first`}},
		{"fastapi detail", 422, `{"detail":"Field required"}`,
			Error{Status: 422, Kind: ErrInvalidRequest, Message: "Field required"}},
		{"fastapi detail list", 422, `{"detail":[{"loc":["body","model"],"msg":"field required"}]}`,
			Error{Status: 422, Kind: ErrInvalidRequest, Message: `[{"loc":["body","model"],"msg":"field required"}]`}},
		{"vllm object error", 400, `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}`,
			Error{Status: 400, Kind: ErrInvalidRequest, Message: "max_tokens is too large"}},
		{"llama-server error", 503, `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`,
			Error{Status: 503, Kind: ErrOverloaded, Message: "Loading model"}},
		{"bare message", 500, `{"message":"boom"}`,
			Error{Status: 500, Kind: ErrAPI, Message: "boom"}},
		{"plain text", 502, "  <html>Bad Gateway</html>\n",
			Error{Status: 502, Kind: ErrAPI, Message: "<html>Bad Gateway</html>"}},
		{"empty body", 504, "",
			Error{Status: 504, Kind: ErrTimeout, Message: "Gateway Timeout"}},
		{"json array", 500, `["x"]`,
			Error{Status: 500, Kind: ErrAPI, Message: `["x"]`}},
		{"unknown object", 500, `{"foo":1}`,
			Error{Status: 500, Kind: ErrAPI, Message: `{"foo":1}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := openAIChatCodec{}.DecodeError(tt.status, []byte(tt.body))
			if got == nil || *got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestOpenAIChatDecodeErrorLongBody(t *testing.T) {
	body := strings.Repeat("é", 3000) // 6000 bytes, multi-byte runes
	e := openAIChatCodec{}.DecodeError(500, []byte(body))
	if len(e.Message) > 2100 || !strings.HasSuffix(e.Message, "…") || strings.ContainsRune(e.Message, '\uFFFD') {
		t.Errorf("message of %d bytes, want a clean cut near 2 KB", len(e.Message))
	}
}

func TestOpenAIChatEncodeError(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{Kind: ErrInvalidRequest, Message: "bad", Param: "messages"}, `{"error":{"message":"bad","type":"invalid_request_error","param":"messages","code":null}}`},
		{Error{Kind: ErrAuthentication, Message: "key"}, `{"error":{"message":"key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`},
		{Error{Kind: ErrBilling, Message: "pay"}, `{"error":{"message":"pay","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`},
		{Error{Kind: ErrPermission, Message: "no"}, `{"error":{"message":"no","type":"permission_error","param":null,"code":null}}`},
		{Error{Kind: ErrNotFound, Message: "nf"}, `{"error":{"message":"nf","type":"invalid_request_error","param":null,"code":"model_not_found"}}`},
		{Error{Kind: ErrRequestTooLarge, Message: "big"}, `{"error":{"message":"big","type":"invalid_request_error","param":null,"code":"request_too_large"}}`},
		{Error{Kind: ErrRateLimit, Message: "slow"}, `{"error":{"message":"slow","type":"rate_limit_exceeded","param":null,"code":"rate_limit_exceeded"}}`},
		{Error{Kind: ErrAPI, Message: "oops"}, `{"error":{"message":"oops","type":"server_error","param":null,"code":null}}`},
		{Error{Kind: ErrOverloaded, Message: "busy"}, `{"error":{"message":"busy","type":"server_error","param":null,"code":"overloaded"}}`},
		{Error{Kind: ErrTimeout, Message: "late"}, `{"error":{"message":"late","type":"server_error","param":null,"code":"timeout"}}`},
		{Error{Kind: ErrRateLimit, Message: "m", Code: "tokens_per_min"}, `{"error":{"message":"m","type":"rate_limit_exceeded","param":null,"code":"tokens_per_min"}}`},
		{Error{Kind: ErrAPI, Message: "line\n\"q\" <b>"}, `{"error":{"message":"line\n\"q\" <b>","type":"server_error","param":null,"code":null}}`},
	}
	for _, tt := range tests {
		t.Run(string(tt.err.Kind), func(t *testing.T) {
			got := openAIChatCodec{}.EncodeError(&tt.err)
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if !gjson.ValidBytes(got) {
				t.Error("invalid JSON")
			}
		})
	}
}

// TestOpenAIChatErrorRoundTrip: every kind survives EncodeError then
// DecodeError at its own status.
func TestOpenAIChatErrorRoundTrip(t *testing.T) {
	for _, k := range []ErrorKind{ErrInvalidRequest, ErrAuthentication, ErrBilling, ErrPermission, ErrNotFound,
		ErrRequestTooLarge, ErrRateLimit, ErrAPI, ErrOverloaded, ErrTimeout} {
		in := &Error{Status: StatusForKind(k), Kind: k, Message: "msg " + string(k)}
		out := openAIChatCodec{}.DecodeError(in.Status, openAIChatCodec{}.EncodeError(in))
		if out.Kind != k || out.Message != in.Message || out.Status != in.Status {
			t.Errorf("%s: got %+v", k, out)
		}
	}
}
