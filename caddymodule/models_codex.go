package caddymodule

import "net/http"

// Codex reads its models' metadata from a catalog: with
//
//	[model_providers.louter]
//	base_url = "http://host:8080/v1"
//	model_catalog_url = "http://host:8080/v1"
//
// it asks GET <catalog>/models?client_version=<its version> and wants
// {"models":[ModelInfo...]}, not OpenAI's list; without an entry for its
// model it prints "Model metadata for `X` not found. Defaulting to fallback
// metadata". The client_version parameter, which only Codex sends, tells
// the two requests apart on the same path. Each routed model is described
// with the defaults of Codex's own fallback, which hold for any model
// behind a Responses translation: louter knows neither the model's context
// window nor its reasoning levels, so the entry leaves the window out
// (Codex then keeps its default) and offers the common effort levels.

// isCodexCatalog reports whether a model list request is Codex's catalog
// request.
func isCodexCatalog(r *http.Request) bool {
	return r.URL.Query().Has("client_version")
}

// codexReasoningLevel is one of ModelInfo's supported_reasoning_levels.
type codexReasoningLevel struct {
	Effort      string `json:"effort"`
	Description string `json:"description"`
}

// codexTruncation is ModelInfo's truncation_policy.
type codexTruncation struct {
	Mode  string `json:"mode"`
	Limit int    `json:"limit"`
}

// codexModelInfo is the ModelInfo of Codex's catalog, with the fields
// Codex 0.169 reads.
type codexModelInfo struct {
	Slug                       string                `json:"slug"`
	DisplayName                string                `json:"display_name"`
	Description                string                `json:"description"`
	DefaultReasoningLevel      string                `json:"default_reasoning_level"`
	SupportedReasoningLevels   []codexReasoningLevel `json:"supported_reasoning_levels"`
	ShellType                  string                `json:"shell_type"`
	Visibility                 string                `json:"visibility"`
	SupportedInAPI             bool                  `json:"supported_in_api"`
	Priority                   int                   `json:"priority"`
	Upgrade                    *string               `json:"upgrade"`
	BaseInstructions           *string               `json:"base_instructions"`
	SupportsReasoningSummaries bool                  `json:"supports_reasoning_summaries"`
	SupportVerbosity           bool                  `json:"support_verbosity"`
	DefaultVerbosity           *string               `json:"default_verbosity"`
	ApplyPatchToolType         *string               `json:"apply_patch_tool_type"`
	TruncationPolicy           codexTruncation       `json:"truncation_policy"`
	SupportsParallelToolCalls  bool                  `json:"supports_parallel_tool_calls"`
	ExperimentalSupportedTools []string              `json:"experimental_supported_tools"`
}

// serveCodexCatalog answers Codex's catalog request with the routed
// models.
func serveCodexCatalog(w http.ResponseWriter, models []listedModel) error {
	out := make([]codexModelInfo, len(models))
	for i, m := range models {
		out[i] = codexModelInfo{
			Slug: m.id, DisplayName: m.id, Description: "served by louter backend " + m.backend,
			DefaultReasoningLevel: "medium",
			SupportedReasoningLevels: []codexReasoningLevel{
				{"low", "Fast responses with lighter reasoning"},
				{"medium", "Balances speed and reasoning depth"},
				{"high", "Greater reasoning depth for complex problems"},
			},
			ShellType: "shell_command", Visibility: "list", SupportedInAPI: true, Priority: i + 1,
			SupportsReasoningSummaries: true,
			TruncationPolicy:           codexTruncation{"bytes", 10000},
			SupportsParallelToolCalls:  true,
			ExperimentalSupportedTools: []string{},
		}
	}
	return writeJSON(w, http.StatusOK, struct {
		Models []codexModelInfo `json:"models"`
	}{out})
}
