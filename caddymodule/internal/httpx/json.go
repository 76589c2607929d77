package httpx

import (
	"net/http"
	"strconv"

	"github.com/louter/louter/translate"
)

// WriteError answers with e as a complete JSON response in the client's
// protocol. It is used before anything was written to the client.
func WriteError(w http.ResponseWriter, client translate.Codec, e *translate.Error) error {
	body := client.EncodeError(e)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(translate.ClientStatus(client.Protocol(), e))
	_, err := w.Write(body)
	return err
}

// WriteJSON answers with body, a JSON document, whole.
func WriteJSON(w http.ResponseWriter, status int, body []byte) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, err := w.Write(body)
	return err
}

// MethodAllowed reports whether method may call an endpoint taking want.
func MethodAllowed(method, want string) bool {
	return method == want || want == http.MethodGet && method == http.MethodHead
}
