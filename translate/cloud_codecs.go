package translate

import (
	"github.com/tidwall/sjson"
)

// The cloud providers serve the same models through the same wire formats,
// with a different URL and authentication, which are the caddymodule
// rows' business, and at most a different request body. Each cloud
// protocol is therefore the codec of the protocol it hosts, embedded (so
// the optional interfaces — watch, overflow, tool naming, usage timing,
// status — come with it), under its own name, with the body difference
// applied after the hosted protocol's encoder:
//
//   - vertex_anthropic, Claude on Google Vertex AI (rawPredict /
//     streamRawPredict): the Messages API body without "model" (the URL
//     names it) and with "anthropic_version": "vertex-2023-10-16" in the
//     body instead of the anthropic-version header. "stream" stays.
//   - vertex_gemini, Gemini on Vertex AI (publishers/google): the
//     generateContent body unchanged; the model is in the URL as on the
//     Gemini API.
//   - azure_openai and azure_openai_responses, the Azure OpenAI Chat
//     Completions and Responses APIs: the OpenAI bodies unchanged
//     ("model" is the deployment name). Azure's content filter results
//     are extra members the OpenAI decoders skip; its finish_reason
//     content_filter and its error code content_filter are OpenAI's own.
//
// These protocols are spoken by backends only: no client sends them, so
// their request decoders are never used.
const (
	ProtocolVertexAnthropic      Protocol = "vertex_anthropic"       // Claude on Vertex AI
	ProtocolVertexGemini         Protocol = "vertex_gemini"          // Gemini on Vertex AI
	ProtocolAzureOpenAIChat      Protocol = "azure_openai"           // Azure OpenAI Chat Completions
	ProtocolAzureOpenAIResponses Protocol = "azure_openai_responses" // Azure OpenAI Responses
)

// VertexAnthropicVersion is the anthropic_version Vertex AI's Claude
// endpoints require in the body.
const VertexAnthropicVersion = "vertex-2023-10-16"

func init() {
	for _, c := range []Codec{vertexAnthropicCodec{}, vertexGeminiCodec{}, azureChatCodec{}, azureResponsesCodec{}} {
		Register(c)
		hostedVariants[c.Protocol()] = true
	}
}

// hostedVariants are the protocols above: a hosted protocol's wire under a
// cloud's name, which Protocols does not list again.
var hostedVariants = map[Protocol]bool{}

// vertexAnthropicCodec is the Anthropic codec with Vertex's body.
type vertexAnthropicCodec struct{ anthropicCodec }

// Protocol implements Codec.
func (vertexAnthropicCodec) Protocol() Protocol { return ProtocolVertexAnthropic }

// EncodeRequest implements Codec: the Messages body, its model removed and
// Vertex's anthropic_version added.
func (c vertexAnthropicCodec) EncodeRequest(req *Request) ([]byte, error) {
	body, err := c.anthropicCodec.EncodeRequest(req)
	if err != nil {
		return nil, err
	}
	return VertexAnthropicBody(body)
}

// NativeContextEditing implements ContextCodec: whether Claude on Vertex
// applies context_management, and with which beta header, is not
// established, so louter applies the edits itself (EditContext).
func (vertexAnthropicCodec) NativeContextEditing() bool { return false }

// VertexAnthropicBody turns a Messages API body into the body of Vertex's
// rawPredict: "model" removed, "anthropic_version" set to
// VertexAnthropicVersion unless the body names one.
func VertexAnthropicBody(body []byte) ([]byte, error) {
	body, err := sjson.DeleteBytes(body, "model")
	if err != nil {
		return nil, err
	}
	return sjson.SetBytes(body, "anthropic_version", VertexAnthropicVersion)
}

// vertexGeminiCodec is the Gemini codec under Vertex's name.
type vertexGeminiCodec struct{ geminiCodec }

// Protocol implements Codec.
func (vertexGeminiCodec) Protocol() Protocol { return ProtocolVertexGemini }

// azureChatCodec is the OpenAI Chat codec under Azure's name.
type azureChatCodec struct{ openAIChatCodec }

// Protocol implements Codec.
func (azureChatCodec) Protocol() Protocol { return ProtocolAzureOpenAIChat }

// WithDialect implements DialectCodec, keeping Azure's name: Azure also
// hosts open models (DeepSeek, Llama) behind the same API.
func (azureChatCodec) WithDialect(d *Dialect) Codec {
	return azureChatCodec{openAIChatCodec{dialect: d}}
}

// azureResponsesCodec is the OpenAI Responses codec under Azure's name.
type azureResponsesCodec struct{ openAIResponsesCodec }

// Protocol implements Codec.
func (azureResponsesCodec) Protocol() Protocol { return ProtocolAzureOpenAIResponses }

// RunsServerTool implements ServerToolCodec: Claude on Vertex AI runs
// none of Anthropic's server tools (its documentation lists them as not
// supported), so a request offering one follows the route's
// ServerToolPolicy rather than failing at Vertex.
func (vertexAnthropicCodec) RunsServerTool(ServerToolKind) bool { return false }

// RunsServerTool implements ServerToolCodec: Azure OpenAI's Responses API
// is not known to run OpenAI's web search; a request offering it follows
// the route's ServerToolPolicy rather than failing at Azure.
func (azureResponsesCodec) RunsServerTool(ServerToolKind) bool { return false }
