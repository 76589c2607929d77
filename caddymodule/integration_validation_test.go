package caddymodule_test

// Strict request validation through a real Caddy: a field of the wrong
// type or an impossible value, and a duplicated routing member, reach each
// client's SDK as a 400 of its own error type naming the field, on
// translated and passthrough pairs alike.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"

	"github.com/louter/louter/internal/testcaddy"
)

// TestIntegrationValidationSDKs sends an impossible value with each
// official SDK, through a translated pair and a passthrough pair.
func TestIntegrationValidationSDKs(t *testing.T) {
	ports := testcaddy.Start(t, overflowCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	e := &env{t: t, louter: testcaddy.URL(ports[0])}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	for _, model := range []string{"to-openai_chat", "to-anthropic"} {
		t.Run("anthropic/max_tokens/"+model, func(t *testing.T) {
			p := anthropicParams(model)
			p.MaxTokens = -1
			c := anthropicClient(e, "text")
			_, err := c.Messages.New(ctx, p)
			var ae *anthropic.Error
			if !errors.As(err, &ae) || ae.StatusCode != 400 || gjson.Get(ae.RawJSON(), "error.type").Str != "invalid_request_error" ||
				gjson.Get(ae.RawJSON(), "error.message").Str != "max_tokens: Input should be greater than or equal to 1" {
				t.Fatalf("got %v", err)
			}
		})
	}
	for _, model := range []string{"to-anthropic", "to-openai_chat"} {
		t.Run("openai_chat/temperature/"+model, func(t *testing.T) {
			p := openaiParams(model)
			p.Temperature = openai.Float(3)
			c := openaiClient(e, "text")
			_, err := c.Chat.Completions.New(ctx, p)
			var oe *openai.Error
			if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Param != "temperature" || oe.Code != "decimal_above_max_value" {
				t.Fatalf("got %v", err)
			}
		})
	}
	for _, model := range []string{"to-gemini", "to-openai_responses"} {
		t.Run("responses/max_output_tokens/"+model, func(t *testing.T) {
			c := responsesClient(e, "text")
			_, err := c.Responses.New(ctx, responses.ResponseNewParams{
				Model:           model,
				Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
				MaxOutputTokens: openai.Int(-5),
			})
			var oe *openai.Error
			if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Param != "max_output_tokens" || oe.Code != "integer_below_min_value" {
				t.Fatalf("got %v", err)
			}
		})
	}
	for _, model := range []string{"to-anthropic", "to-gemini"} {
		t.Run("gemini/maxOutputTokens/"+model, func(t *testing.T) {
			_, err := geminiClient(t, e, "text").Models.GenerateContent(ctx, model, genai.Text("hi"), &genai.GenerateContentConfig{MaxOutputTokens: -1})
			var ae genai.APIError
			if !errors.As(err, &ae) || ae.Code != 400 || ae.Status != "INVALID_ARGUMENT" || !strings.Contains(ae.Message, "generation_config.max_output_tokens") {
				t.Fatalf("got %v", err)
			}
			if len(ae.Details) == 0 || !strings.Contains(gjson.Get(mustJSON(t, ae.Details), "0.fieldViolations.0.field").Str, "generation_config.max_output_tokens") {
				t.Errorf("details %v", ae.Details)
			}
		})
	}
}

// TestIntegrationValidationRaw covers the wrong types the SDKs cannot send
// and the duplicated routing members, with raw HTTP.
func TestIntegrationValidationRaw(t *testing.T) {
	ports := testcaddy.Start(t, overflowCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	louter := testcaddy.URL(ports[0])
	cases := []struct {
		name, path, body string
		field            string // where the client's error names the field
		want             string
	}{
		{"anthropic stream yes", "/v1/messages", `{"model":"to-openai_chat","max_tokens":5,"stream":"yes","messages":[{"role":"user","content":"hi"}]}`, "error.message", "stream: Input should be a valid boolean"},
		{"anthropic system 12", "/v1/messages", `{"model":"to-gemini","max_tokens":5,"system":12,"messages":[{"role":"user","content":"hi"}]}`, "error.message", "system: Input should be"},
		{"anthropic tools x", "/v1/messages", `{"model":"to-openai_responses","max_tokens":5,"tools":"x","messages":[{"role":"user","content":"hi"}]}`, "error.message", "tools: Input should be a valid list"},
		{"anthropic max_tokens 1e300", "/v1/messages", `{"model":"to-openai_chat","max_tokens":1e300,"messages":[{"role":"user","content":"hi"}]}`, "error.message", "max_tokens: Input should be less than or equal to"},
		{"anthropic duplicate model, passthrough", "/v1/messages", `{"model":"to-anthropic","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"model":"other"}`, "error.message", "model: duplicate key"},
		{"anthropic duplicate max_tokens", "/v1/messages", `{"model":"to-openai_chat","max_tokens":5,"max_tokens":500000,"messages":[{"role":"user","content":"hi"}]}`, "error.message", "max_tokens: duplicate key"},
		{"openai max_tokens abc", "/v1/chat/completions", `{"model":"to-anthropic","max_tokens":"abc","messages":[{"role":"user","content":"hi"}]}`, "error.param", "max_tokens"},
		{"openai messages empty", "/v1/chat/completions", `{"model":"to-gemini","messages":[]}`, "error.param", "messages"},
		{"openai duplicate stream, passthrough", "/v1/chat/completions", `{"model":"to-openai_chat","stream":false,"messages":[{"role":"user","content":"hi"}],"stream":true}`, "error.param", "stream"},
		{"responses input 12", "/v1/responses", `{"model":"to-anthropic","input":12}`, "error.param", "input"},
		{"responses duplicate max_output_tokens, passthrough", "/v1/responses", `{"model":"to-openai_responses","input":"hi","max_output_tokens":16,"max_output_tokens":99999}`, "error.param", "max_output_tokens"},
		{"gemini temperature string", "/v1beta/models/to-openai_chat:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"temperature":"hot"}}`, "error.details.0.fieldViolations.0.field", "generation_config.temperature"},
		{"gemini duplicate maxOutputTokens, passthrough", "/v1beta/models/to-gemini:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":5,"max_output_tokens":99999}}`, "error.message", "Duplicate field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, louter+tc.path, tc.body, "X-Mock-Scenario", "text")
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 400 || !strings.Contains(gjson.GetBytes(raw, tc.field).Str, tc.want) {
				t.Fatalf("status %d, %s = %q, want %q: %s", resp.StatusCode, tc.field, gjson.GetBytes(raw, tc.field).Str, tc.want, raw)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
