package caddymodule

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// AWS Bedrock as a backend. Bedrock's runtime puts the model and the
// operation into the URL, /model/{modelId}/{operation}, at the root of
// https://bedrock-runtime.{region}.amazonaws.com, and streams in the AWS
// event-stream framing rather than SSE. Its rows (registered here, backend
// only: no client speaks Bedrock through louter) say so:
//
//   - bedrock: Claude through InvokeModel and InvokeModelWithResponseStream,
//     whose body is Anthropic's Messages body (translate's bedrock codec);
//   - bedrock_converse: any model through Converse and ConverseStream,
//     Bedrock's own model-neutral API (translate's bedrock_converse codec).
//
// A backend authenticates with a Bedrock API key as api_key (sent as
// Authorization: Bearer), or with SigV4 through "auth aws_sigv4"
// (package auth/awssigv4).

func init() {
	registerProtocol(&protocolRow{
		protocol:         translate.ProtocolBedrock,
		betas:            bedrockBetas, // anthropic_betas.go
		bodyParams:       bodyParamPaths{[]string{"max_tokens"}, "temperature", "top_p", "top_k"},
		endpoint:         bedrockEndpoint("invoke", "invoke-with-response-stream"),
		setKey:           setBearer,
		streamAccept:     stream.EventStreamContentType,
		responseFraming:  awsEventStreamFraming,
		defaultBasePath:  "/",
		modelInURL:       true,
		probeInvoke:      true,
		counter:          bedrockInvokeCounter,
		tokenFraming:     tokencount.Anthropic,
		provider:         semconv.GenAIProviderNameAWSBedrock,
		recordedPrefixes: []string{"X-Amzn-Bedrock-", "X-Amzn-Requestid", "X-Amzn-Errortype"},
	})
	registerProtocol(&protocolRow{
		protocol:         translate.ProtocolBedrockConverse,
		endpoint:         bedrockEndpoint("converse", "converse-stream"),
		setKey:           setBearer,
		streamAccept:     stream.EventStreamContentType,
		responseFraming:  awsEventStreamFraming,
		defaultBasePath:  "/",
		modelInURL:       true,
		probeInvoke:      true,
		counter:          bedrockConverseCounter,
		provider:         semconv.GenAIProviderNameAWSBedrock,
		recordedPrefixes: []string{"X-Amzn-Bedrock-", "X-Amzn-Requestid", "X-Amzn-Errortype"},
	})
}

// bedrockModelSegment escapes a model id as one path segment: an
// inference profile's ARN holds ':' and '/', which must stay data
// (arn%3Aaws%3Abedrock%3A...%3Ainference-profile%2Fus.anthropic...).
func bedrockModelSegment(model string) string {
	return strings.ReplaceAll(url.PathEscape(model), ":", "%3A")
}

// bedrockEndpoint returns a Bedrock row's endpoint function: the model's
// path with the operation for a complete answer or for a stream.
func bedrockEndpoint(op, streamOp string) func(model string, stream bool) (string, string) {
	return func(model string, stream bool) (string, string) {
		verb := op
		if stream {
			verb = streamOp
		}
		return "/model/" + bedrockModelSegment(model) + "/" + verb, ""
	}
}

// awsEventStreamFraming is the Bedrock rows' responseFraming: a 2xx body
// in the AWS event-stream framing is re-framed as SSE (package stream's
// EventStreamSSE), message by message, so reverse_proxy flushes each as it
// comes and the codec's stream decoder reads SSE. An error body (JSON) is
// left alone.
func awsEventStreamFraming(resp *http.Response) {
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode >= 300 || !strings.HasPrefix(ct, stream.EventStreamContentType) {
		return
	}
	resp.Body = stream.NewEventStreamSSE(resp.Body, 0)
	resp.Header.Set("Content-Type", "text/event-stream")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
}

// bedrockInvokeCounter asks Bedrock's CountTokens for an InvokeModel body:
// POST /model/{id}/count-tokens with {"input":{"invokeModel":{"body":
// base64}}}, answered {"inputTokens":N}.
var bedrockInvokeCounter = &backendCounter{
	path: func(model string) string { return "/model/" + bedrockModelSegment(model) + "/count-tokens" },
	body: func(c translate.Codec, req *translate.Request) ([]byte, error) {
		body, err := c.EncodeRequest(req)
		if err != nil {
			return nil, err
		}
		return []byte(`{"input":{"invokeModel":{"body":"` + base64.StdEncoding.EncodeToString(body) + `"}}}`), nil
	},
	read: readInputTokens,
}

// bedrockConverseCounter asks CountTokens for a Converse body:
// {"input":{"converse":{"messages":...,"system":...}}}.
var bedrockConverseCounter = &backendCounter{
	path: bedrockInvokeCounter.path,
	body: func(c translate.Codec, req *translate.Request) ([]byte, error) {
		body, err := c.EncodeRequest(req)
		if err != nil {
			return nil, err
		}
		g := gjson.ParseBytes(body)
		out := []byte(`{"input":{"converse":{"messages":` + g.Get("messages").Raw)
		if s := g.Get("system"); s.Exists() {
			out = append(out, `,"system":`+s.Raw...)
		}
		if tc := g.Get("toolConfig"); tc.Exists() {
			out = append(out, `,"toolConfig":`+tc.Raw...)
		}
		return append(out, "}}}"...), nil
	},
	read: readInputTokens,
}

// readInputTokens reads CountTokens' answer.
func readInputTokens(answer []byte) (int, bool) {
	v := gjson.GetBytes(answer, "inputTokens")
	return int(v.Int()), v.Type == gjson.Number
}
