package caddymodule

import (
	"net/http"
	"strings"

	"github.com/louter/louter/caddymodule/internal/stateful"
	"github.com/louter/louter/translate"
)

// The Gemini Interactions API (translate.ProtocolGeminiInteractions) as a
// client protocol: its row, and what the row points at. Clients call
// POST .../v1beta/interactions with the model and "stream" in the body;
// louter answers from any backend. The rest of the API works on stored
// interactions (previous_interaction_id; GET, DELETE and POST .../cancel
// of .../v1beta/interactions/{id}), which louter keeps in its store as
// stored responses are (internal/stateful/interactions_state.go). With
// stored_responses disabled those paths get a 404 in the API's error
// shape, and the request decoder refuses previous_interaction_id and
// store:true. No backend can speak the protocol (the row has no endpoint).

func init() {
	registerProtocol(&protocolRow{
		protocol:   translate.ProtocolGeminiInteractions,
		classify:   classifyInteractions,
		unknownURL: stateful.InteractionsUnknownURL,
		// The genai SDK's event-stream reader skips comment lines.
		keepalive:  []byte(": keep-alive\n\n"),
		stateful:   &stateful.Interactions, // internal/stateful/interactions_state.go
		keyMissing: "louter: no API key was sent (x-goog-api-key, ?key= or Authorization: Bearer)",
		keyInvalid: "louter: API key not valid. Please pass a valid API key.",
		ownHeaders: headerSet("X-Goog-Api-Client", "Api-Revision"),
		// The provider's own credential headers, should a same-protocol
		// request ever be passed on (none is: there is no backend).
		passAuthHeaders: headerSet("X-Goog-Api-Key", "Authorization", "X-Goog-User-Project"),
		bodyParams: bodyParamPaths{[]string{"generation_config.max_output_tokens"},
			"generation_config.temperature", "generation_config.top_p", ""},
	})
}

// classifyInteractions is the Interactions row's classify: everything
// under .../v1beta/interactions (after any prefix). A POST to the
// collection is a chat call; a stored interaction's paths
// (.../interactions/{id}, .../{id}/cancel) are answered from the store
// before the surface is (internal/stateful: Layer.ServeState), and anything else is
// an API path louter does not serve.
func classifyInteractions(_ *http.Request, path string) (apiRequest, bool) {
	i := strings.Index(path, "/v1beta/interactions")
	if i < 0 {
		return apiRequest{}, false
	}
	rest := path[i+len("/v1beta/interactions"):]
	if rest != "" && rest[0] != '/' {
		return apiRequest{}, false // .../v1beta/interactionsX is not the API
	}
	p := translate.ProtocolGeminiInteractions
	req := apiRequest{api: "/v1beta/interactions" + rest, apiEndpoint: apiEndpoint{protocol: p, action: actNotServed}}
	if rest == "" || rest == "/" {
		req.apiEndpoint, req.client = apiEndpoint{p, actChat, http.MethodPost}, p
	}
	return req, true
}
