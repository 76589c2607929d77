package caddymodule

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/louter/louter/translate"
)

// The model lists louter answers itself, in the shape of the client's
// protocol (surface.go decides which; the protocol's row, protocols.go,
// points at its list and model answers, OpenAI's without):
//
//   - OpenAI: GET .../v1/models, GET .../v1/models/{id};
//   - Anthropic, when the request carries anthropic-version: the same
//     paths, with Anthropic's cursor pagination (limit, after_id,
//     before_id);
//   - Gemini: GET .../v1beta/models (pageSize, pageToken) and
//     GET .../v1beta/models/{name}.
//
// A list holds, in route order without duplicates, each route's literal
// pattern, the names the route lists (ModelRoute.List) and its aliases
// (ModelRoute.Aliases), then, for a backend
// with list_models passthrough, the backend's own models that the routes
// send to it. A single model is found when a route matches its name,
// listed or not, so a glob route's models can be looked up one by one.

// listedSince is the creation time the lists report: louter knows no
// model's real one, and a fixed time keeps the answers stable.
var listedSince = time.Now().UTC().Truncate(time.Second)

// Page sizes: Anthropic's default and maximum, Gemini's default and maximum.
const (
	anthropicListDefault = 20
	geminiListDefault    = 50
	listMax              = 1000
)

// listedModel is one entry of a model list.
type listedModel struct {
	id      string
	backend string // the backend the routes send it to
}

// listedModels returns the models to list. r is the list request, whose
// context the passthrough requests to backends run in.
func (l *Louter) listedModels(r *http.Request) []listedModel {
	var out []listedModel
	seen := map[string]bool{}
	c := clientOf(r)
	add := func(id string) {
		if id == "" || seen[id] {
			return
		}
		if c != nil && !c.allows(id) {
			return // the client's models (client_keys.go): after the cache, which all clients share
		}
		if route, ok := l.route(id); ok {
			seen[id] = true
			out = append(out, listedModel{id, route.Backend})
		}
	}
	for i := range l.Models {
		if m := l.Models[i].Match; !strings.Contains(m, "*") {
			add(m)
		}
		for _, id := range l.Models[i].List {
			add(id)
		}
		for _, id := range l.Models[i].Aliases {
			add(id)
		}
	}
	names := make([]string, 0, len(l.Backends))
	for name, b := range l.Backends {
		if b != nil && b.ListModels == listModelsPassthrough {
			names = append(names, name)
		}
	}
	slices.Sort(names) // a stable order across requests
	// All asked at once, under a deadline, through a cache (models_fanout.go).
	for i, ids := range l.backendLists(r, names) {
		name := names[i]
		for _, id := range ids {
			if route, ok := l.route(id); ok && route.Backend == name {
				add(id)
			}
		}
	}
	return out
}

// serveModelList answers a model list request in codec's protocol.
func (l *Louter) serveModelList(w http.ResponseWriter, r *http.Request, codec translate.Codec) error {
	models := l.listedModels(r)
	if isCodexCatalog(r) {
		return serveCodexCatalog(w, models) // models_codex.go
	}
	if list := rowOf(codec.Protocol()).listModels; list != nil { // protocols.go
		return list(l, w, r, codec, models)
	}
	data := make([]openAIModel, len(models))
	for i, m := range models {
		data[i] = newOpenAIModel(m)
	}
	return writeJSON(w, http.StatusOK, struct {
		Object string        `json:"object"`
		Data   []openAIModel `json:"data"`
	}{"list", data})
}

// serveModel answers a request for one model in codec's protocol: 404 when
// no route matches the name.
func (l *Louter) serveModel(w http.ResponseWriter, r *http.Request, codec translate.Codec, id string) error {
	row := rowOf(codec.Protocol()) // protocols.go
	if row.modelPrefix != "" {
		id = strings.TrimPrefix(id, row.modelPrefix)
	}
	route, ok := l.route(id)
	if !ok {
		return l.reject(w, codec, translate.NewError(http.StatusNotFound, fmt.Sprintf("louter: model %q is not configured", id)))
	}
	m := listedModel{id, route.Backend}
	if info := row.modelInfo; info != nil {
		return writeJSON(w, http.StatusOK, info(m))
	}
	return writeJSON(w, http.StatusOK, newOpenAIModel(m))
}

// openAIModel is OpenAI's Model object.
type openAIModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func newOpenAIModel(m listedModel) openAIModel {
	return openAIModel{ID: m.id, Object: "model", Created: listedSince.Unix(), OwnedBy: m.backend}
}

// anthropicModel is the part of Anthropic's ModelInfo louter can tell.
type anthropicModel struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	CreatedAt   string `json:"created_at"`
}

func newAnthropicModel(m listedModel) anthropicModel {
	return anthropicModel{Type: "model", ID: m.id, DisplayName: m.id, CreatedAt: listedSince.Format(time.RFC3339)}
}

// serveAnthropicList answers one page of an Anthropic model list: limit
// models after after_id, or the last limit before before_id.
func (l *Louter) serveAnthropicList(w http.ResponseWriter, r *http.Request, codec translate.Codec, models []listedModel) error {
	q := r.URL.Query()
	limit := anthropicListDefault
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > listMax {
			return l.reject(w, codec, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest,
				Message: fmt.Sprintf("louter: limit must be an integer from 1 to %d", listMax), Param: "limit"})
		}
		limit = n
	}
	index := func(id string) int {
		return slices.IndexFunc(models, func(m listedModel) bool { return m.id == id })
	}
	start, end := 0, len(models)
	if id := q.Get("after_id"); id != "" {
		start = index(id) + 1 // an unknown id (-1) starts over
		end = min(start+limit, len(models))
	} else if id := q.Get("before_id"); id != "" {
		if end = index(id); end < 0 {
			end = len(models)
		}
		start = max(0, end-limit)
	} else {
		end = min(limit, len(models))
	}
	page := models[start:end]
	data := make([]anthropicModel, len(page))
	for i, m := range page {
		data[i] = newAnthropicModel(m)
	}
	var first, last *string
	if len(page) > 0 {
		first, last = &page[0].id, &page[len(page)-1].id
	}
	hasMore := end < len(models)
	if q.Get("before_id") != "" {
		hasMore = start > 0
	}
	return writeJSON(w, http.StatusOK, struct {
		Data    []anthropicModel `json:"data"`
		HasMore bool             `json:"has_more"`
		FirstID *string          `json:"first_id"`
		LastID  *string          `json:"last_id"`
	}{data, hasMore, first, last})
}

// serveGeminiList answers one page of a Gemini model list. The page token
// is the base64url of the last name of the previous page.
func (l *Louter) serveGeminiList(w http.ResponseWriter, r *http.Request, codec translate.Codec, models []listedModel) error {
	q := r.URL.Query()
	size := geminiListDefault
	if s := q.Get("pageSize"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return l.reject(w, codec, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest,
				Message: "louter: pageSize must be a non-negative integer", Param: "pageSize"})
		}
		if n > 0 {
			size = min(n, listMax)
		}
	}
	start := 0
	if tok := q.Get("pageToken"); tok != "" {
		after, err := base64.RawURLEncoding.DecodeString(tok)
		i := slices.IndexFunc(models, func(m listedModel) bool { return m.id == string(after) })
		if err != nil || i < 0 {
			return l.reject(w, codec, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest,
				Message: "louter: invalid pageToken", Param: "pageToken"})
		}
		start = i + 1
	}
	end := min(start+size, len(models))
	out := struct {
		Models        []geminiModelInfo `json:"models"`
		NextPageToken string            `json:"nextPageToken,omitempty"`
	}{Models: make([]geminiModelInfo, 0, end-start)}
	for _, m := range models[start:end] {
		out.Models = append(out.Models, newGeminiModelInfo(m.id))
	}
	if end < len(models) {
		out.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(models[end-1].id))
	}
	return writeJSON(w, http.StatusOK, out)
}

// geminiModelInfo is the part of Gemini's Model resource louter can tell.
type geminiModelInfo struct {
	Name                       string   `json:"name"`
	BaseModelID                string   `json:"baseModelId"`
	Version                    string   `json:"version"`
	DisplayName                string   `json:"displayName"`
	SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
}

func newGeminiModelInfo(model string) geminiModelInfo {
	return geminiModelInfo{
		Name:                       "models/" + model,
		BaseModelID:                model,
		Version:                    "louter",
		DisplayName:                model,
		SupportedGenerationMethods: []string{"generateContent", "streamGenerateContent", "countTokens"},
	}
}

// writeJSON answers v as JSON. A HEAD request gets the headers only
// (net/http drops the body).
func writeJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return nil
}
