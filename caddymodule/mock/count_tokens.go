package mock

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// The mock counts tokens as Anthropic (POST .../v1/messages/count_tokens)
// and Gemini (POST .../models/{model}:countTokens) do, refusing the bodies
// those APIs refuse. The count is CountBase plus the number of messages (or
// contents), so a test can tell a count the backend made from one louter
// made locally, and see that every message arrived.

// CountBase is added to every count the mock answers.
const CountBase = 900000

// anthCountFields are the fields Anthropic's count_tokens accepts; it
// refuses any other ("Extra inputs are not permitted").
var anthCountFields = map[string]bool{
	"model": true, "messages": true, "system": true, "tools": true, "tool_choice": true,
	"thinking": true, "mcp_servers": true, "context_management": true, "output_config": true,
}

// serveCountTokens answers a counting call and reports whether r was one.
func (m *Mock) serveCountTokens(w http.ResponseWriter, r *http.Request) bool {
	var proto translate.Protocol
	if strings.HasSuffix(r.URL.Path, "/v1/messages/count_tokens") {
		proto = translate.ProtocolAnthropic
	} else if _, method, ok := geminiModelMethod(r.URL.Path); ok && method == "countTokens" {
		proto = translate.ProtocolGemini
	} else {
		return false
	}
	codec, _ := translate.Lookup(proto)
	var body []byte
	var readErr error
	if r.Body != nil {
		body, readErr = io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	}
	entry := m.journal.record(string(proto), r, body)
	m.journal.update(entry, func(e *journalEntry) { e.Scenario = "count_tokens" })
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, codec, translate.NewError(http.StatusMethodNotAllowed, "louter_mock: "+r.URL.Path+" takes POST, not "+r.Method), "")
		return true
	}
	if readErr != nil {
		writeError(w, codec, translate.BadRequest("louter_mock: reading the request body: "+readErr.Error()), "")
		return true
	}
	var n int
	var err error
	if proto == translate.ProtocolAnthropic {
		n, err = anthCount(codec, body)
	} else {
		n, err = geminiCount(codec, body)
	}
	if err != nil {
		te, ok := errors.AsType[*translate.Error](err)
		if !ok {
			te = translate.BadRequest(err.Error())
		}
		writeError(w, codec, te, "")
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	if proto == translate.ProtocolAnthropic {
		_, _ = w.Write([]byte(`{"input_tokens":` + strconv.Itoa(n) + `}`))
	} else {
		_, _ = w.Write([]byte(`{"totalTokens":` + strconv.Itoa(n) + `,"promptTokensDetails":[{"modality":"TEXT","tokenCount":` + strconv.Itoa(n) + `}]}`))
	}
	return true
}

func anthCount(codec translate.Codec, body []byte) (int, error) {
	if !gjson.ValidBytes(body) || !gjson.ParseBytes(body).IsObject() {
		return 0, translate.BadRequest("louter_mock: the body must be a JSON object")
	}
	var extra error
	gjson.ParseBytes(body).ForEach(func(k, _ gjson.Result) bool {
		if !anthCountFields[k.Str] {
			extra = translate.BadRequest(k.Str + ": Extra inputs are not permitted")
			return false
		}
		return true
	})
	if extra != nil {
		return 0, extra
	}
	req, err := codec.DecodeRequest(body)
	if err != nil {
		return 0, err
	}
	return CountBase + len(req.Messages), nil
}

func geminiCount(codec translate.Codec, body []byte) (int, error) {
	if !gjson.ValidBytes(body) || !gjson.ParseBytes(body).IsObject() {
		return 0, translate.BadRequest("louter_mock: the body must be a JSON object")
	}
	contents, whole := gjson.GetBytes(body, "contents"), gjson.GetBytes(body, "generateContentRequest")
	switch {
	case contents.Exists() == whole.Exists():
		return 0, translate.BadRequest("louter_mock: exactly one of contents and generateContentRequest must be set")
	case whole.Exists():
		if m := whole.Get("model").Str; !strings.HasPrefix(m, "models/") {
			return 0, translate.BadRequest("generateContentRequest.model: must be models/{model}, got " + strconv.Quote(m))
		}
		body = []byte(whole.Raw)
	}
	req, err := codec.DecodeRequest(body)
	if err != nil {
		return 0, err
	}
	return CountBase + len(req.Messages), nil
}
