package caddymodule

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// Token counting: Anthropic's POST .../v1/messages/count_tokens and Gemini's
// POST .../models/{model}:countTokens, routed by model like chat requests.
// The count comes from whoever can tell best:
//
//   - a backend that has a counting endpoint — Anthropic's count_tokens or
//     Gemini's countTokens — is asked, with the request passed through to a
//     backend of the client's protocol (unless louter applies Anthropic's
//     context edits for it) and translated otherwise;
//   - any other backend (OpenAI Chat, Responses), or one that fails to
//     answer, gets a local count with a BPE tokenizer (package tokencount).
//
// The call never fails once the request is understood: a backend error is
// logged at debug level and answered with the local count.

// countResponseLimit bounds what louter reads of a backend's count answer.
const countResponseLimit = 64 << 10

// countCall is one token-counting request as louter understood it.
type countCall struct {
	client    translate.Codec
	body      []byte // the client's body, as sent
	req       *translate.Request
	model     string // the client's model
	pathModel bool   // the model came from the URL (Gemini)
}

// serveCountTokens answers a token-counting call: a request classified
// actElsewhere (surface.go), already authenticated and known to be a POST.
func (l *Louter) serveCountTokens(w http.ResponseWriter, r *http.Request, req apiRequest) {
	proto, pathModel := req.client, req.model
	client, ok := translate.Lookup(proto)
	if !ok {
		http.Error(w, "louter: no codec for "+string(proto), http.StatusInternalServerError) // a built-in protocol is always registered
		return
	}
	if pathModel != "" {
		// The model is in the URL: an unknown one is refused before the
		// body is read, as the chat endpoints do.
		if _, ok := l.route(pathModel); !ok {
			_ = l.reject(w, client, translate.NewError(http.StatusNotFound, fmt.Sprintf("louter: no backend is configured for model %q", pathModel)))
			return
		}
	}
	// The client's limits, then a turn, both before the body is read
	// (count_bounds.go).
	done, ok := l.admitCount(w, r, proto)
	if !ok {
		return
	}
	defer done()
	release, ok := l.countTurn(w, r, client)
	if !ok {
		return
	}
	defer release()
	call, te := l.readCountCall(r, client, pathModel)
	if te != nil {
		_ = l.reject(w, client, te)
		return
	}
	route, ok := l.route(call.model)
	if !ok {
		_ = l.reject(w, client, translate.NewError(http.StatusNotFound, fmt.Sprintf("louter: no backend is configured for model %q", call.model)))
		return
	}
	b := route.backend
	backendModel := route.backendName(call.model)
	if route.Rename != "" {
		backendModel = route.Rename
	}
	if te := checkBackendModel(b, backendModel, backendModel != call.model); te != nil {
		_ = l.reject(w, client, te) // a name bound for the backend's URL (model_name.go)
		return
	}
	if !l.modelAllowed(w, r, proto, call.model) {
		return // the client's models (client_keys.go)
	}
	// Context edits apply to a count as to the request it counts: a
	// backend that edits itself gets them, the others count the request as
	// louter would send it (context_editing.go), and the answer says what
	// it was before (original_input_tokens). A count asks no model for a
	// summary: a request past a compaction trigger is counted uncompacted.
	framing := rowOf(b.Protocol).tokenFraming
	unedited, te := translate.CountContext(call.req, b.Protocol, b.contextEditing(), func(req *translate.Request) int {
		return tokencount.Quick(req, framing)
	})
	if te != nil {
		_ = l.reject(w, client, te)
		return
	}

	n, passBody, source := 0, []byte(nil), "local"
	if rowOf(b.Protocol).counter != nil && b.Dialect == nil {
		var err error
		n, passBody, err = l.askBackendCount(r, b, call, backendModel)
		if err == nil {
			source = "backend"
		} else if c := l.logger.Check(zapcore.DebugLevel, "backend token count failed; answering the local count"); c != nil {
			c.Write(zap.String("backend", b.name), zap.String("model", call.model), zap.Error(err))
		}
	}
	if source == "local" {
		n = tokencount.Count(call.req, framing, backendModel)
	}
	// The count before the edits: the backend's count (or the local one)
	// and what the edits removed, by the local count of both.
	original := 0
	if unedited != nil {
		original = n
		if len(call.req.ContextManagement.Applied) > 0 {
			after := n
			if source != "local" {
				after = tokencount.Count(call.req, framing, backendModel)
			}
			original += max(tokencount.Count(unedited, framing, backendModel)-after, 0)
		}
	}
	if c := l.logger.Check(zapcore.DebugLevel, "counted tokens"); c != nil {
		c.Write(zap.String("client", string(proto)), zap.String("backend", b.name), zap.String("model", call.model), zap.String("source", source), zap.Int("tokens", n))
	}
	if passBody != nil {
		writeCountJSON(w, passBody) // the backend's own answer, in the client's protocol
		return
	}
	writeCountJSON(w, countAnswer(proto, n, original))
}

// readCountCall reads and decodes a counting request. A client may wrap
// the request to count (Gemini's generateContentRequest: the client
// row's countRequest).
func (l *Louter) readCountCall(r *http.Request, client translate.Codec, pathModel string) (*countCall, *translate.Error) {
	body, te := readBodyUpTo(r, l.maxCountBody, "token counting request body")
	if te != nil {
		return nil, te
	}
	// The chat endpoints' one pass: it refuses invalid JSON, invalid
	// UTF-8 and a repeated model, and reads the model.
	top, te := translate.ScanTopLevel(client.Protocol(), body)
	if te != nil {
		return nil, te
	}
	call := &countCall{client: client, body: body, model: pathModel, pathModel: pathModel != ""}
	decode := body
	if unwrap := rowOf(client.Protocol()).countRequest; unwrap != nil { // protocols.go
		if decode, te = unwrap(body); te != nil {
			return nil, te
		}
	}
	if !call.pathModel {
		m := top.Model
		if m.Type != gjson.String || m.Str == "" {
			return nil, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Message: "louter: the request names no model", Param: "model"}
		}
		call.model = m.Str
	}
	req, err := client.DecodeRequest(decode)
	if err != nil {
		return nil, asError(err, http.StatusBadRequest)
	}
	call.req = req
	return call, nil
}

// countAnswer is the client's answer to a count of n tokens (original
// before louter's context edits, 0 if none), in its row's shape
// (protocols.go); Anthropic's for a row that has none.
func countAnswer(client translate.Protocol, n, original int) []byte {
	if answer := rowOf(client).countAnswer; answer != nil {
		return answer(n, original)
	}
	return inputTokensAnswer(n, original)
}

func writeCountJSON(w http.ResponseWriter, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// backendCounter is what louter needs to ask one protocol's counting
// endpoint: its path below the base path, the body to send for a translated
// request, and how to read the count from the answer.
type backendCounter struct {
	path func(model string) string
	// body turns the IR request (already named for the backend) into the
	// counting endpoint's body.
	body func(c translate.Codec, req *translate.Request) ([]byte, error)
	// read returns the count in the answer.
	read func(answer []byte) (int, bool)
}

// anthropicCounter asks Anthropic's count_tokens (the Anthropic row's
// counter).
var anthropicCounter = &backendCounter{
	path: func(string) string { return "/messages/count_tokens" },
	body: func(c translate.Codec, req *translate.Request) ([]byte, error) {
		out, err := c.EncodeRequest(req)
		if err != nil {
			return nil, err
		}
		// count_tokens takes the prompt, not the sampling settings:
		// the API refuses fields it does not know.
		for _, k := range [...]string{"max_tokens", "stream", "temperature", "top_p", "top_k", "stop_sequences", "metadata", "service_tier"} {
			if out, err = sjson.DeleteBytes(out, k); err != nil {
				return nil, err
			}
		}
		return out, nil
	},
	read: func(answer []byte) (int, bool) {
		v := gjson.GetBytes(answer, "input_tokens")
		return int(v.Int()), v.Type == gjson.Number
	},
}

// geminiCounter asks Gemini's countTokens (the Gemini row's counter).
var geminiCounter = &backendCounter{
	path: func(model string) string { return "/models/" + escapeModelPath(model) + ":countTokens" },
	body: func(c translate.Codec, req *translate.Request) ([]byte, error) {
		out, err := c.EncodeRequest(req)
		if err != nil {
			return nil, err
		}
		// The whole request, so the system instruction and the tools
		// are counted too; it must name its model.
		if out, err = sjson.SetBytes(out, "model", "models/"+req.Model); err != nil {
			return nil, err
		}
		return append(append([]byte(`{"generateContentRequest":`), out...), '}'), nil
	},
	read: func(answer []byte) (int, bool) {
		v := gjson.GetBytes(answer, "totalTokens")
		return int(v.Int()), v.Type == gjson.Number
	},
}

// askBackendCount asks the backend's counting endpoint through its upstream
// handler. For a client of the backend's own protocol it returns the
// backend's answer to pass on as it is; otherwise only the count.
func (l *Louter) askBackendCount(r *http.Request, b *Backend, call *countCall, backendModel string) (int, []byte, error) {
	bc := rowOf(b.Protocol).counter
	// As for chat requests (handler.go): a backend of the client's
	// protocol for which louter applies the context edits gets the
	// edited request, translated. (A backend asked here has no dialect.)
	passthrough := b.passesThrough(call.client.Protocol())
	var body []byte
	var err error
	if passthrough {
		body = call.body
		// The model is renamed where the body names it: its model member,
		// or where the row says a body whose URL names the model repeats
		// it (Gemini's generateContentRequest.model); the URL carries the
		// rename otherwise.
		switch {
		case backendModel == call.model:
		case !call.pathModel:
			body, err = sjson.SetBytes(body, "model", backendModel)
		case rowOf(b.Protocol).renameCountBody != nil:
			body, err = rowOf(b.Protocol).renameCountBody(body, backendModel)
		}
		if err != nil {
			return 0, nil, err
		}
	} else {
		ir := *call.req
		ir.Model = backendModel
		if body, err = bc.body(b.codec, &ir); err != nil {
			return 0, nil, fmt.Errorf("translating the request: %w", err)
		}
	}
	cred, _ := rewriteRequest(r, backendRequest{backend: b, body: body, model: backendModel, passthrough: passthrough})
	setBackendPath(r.URL, b.basePath, bc.path(backendModel)) // model_name.go: the model is escaped
	r.RequestURI = r.URL.RequestURI()
	r = b.attachCredential(r, cred) // below reverse_proxy's logs (credential_transport.go)

	rec, err := callBackend(b, r, countResponseLimit)
	if err != nil {
		return 0, nil, err
	}
	if rec.status != http.StatusOK {
		// The body is not logged: an error body may echo the key.
		return 0, nil, fmt.Errorf("backend answered %d", rec.status)
	}
	n, ok := bc.read(rec.body.Bytes())
	if !ok || rec.overflow {
		return 0, nil, fmt.Errorf("backend answer holds no count")
	}
	if passthrough {
		return n, rec.body.Bytes(), nil
	}
	return n, nil, nil
}
