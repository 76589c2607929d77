package record

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/jsonwire"
)

// appendJSON appends x as one line of JSON, the same object json.Marshal
// would write (with SetEscapeHTML(false)). It exists for speed: the bulk
// of a record is the bodies and events it holds as raw JSON, which
// encoding/json would scan twice more (to validate, then to compact);
// here each is checked once, with gjson's faster validator, and copied.
func (x *Exchange) appendJSON(b []byte) []byte {
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, int64(x.Version), 10)
	b = append(b, `,"time":`...)
	t, _ := x.Time.MarshalJSON()
	b = append(b, t...)
	b = append(b, `,"id":`...)
	b = jsonwire.AppendStringAsEncodingJSON(b, x.ID)
	b = append(b, `,"client":{"protocol":`...)
	b = jsonwire.AppendStringAsEncodingJSON(b, string(x.Client.Protocol))
	b = append(b, `,"path":`...)
	b = jsonwire.AppendStringAsEncodingJSON(b, x.Client.Path)
	b = append(b, '}')
	if x.Backend != nil {
		b = append(b, `,"backend":`...)
		b = appendMarshal(b, x.Backend) // small
	}
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, x.Stream)
	if x.Attempts != 0 {
		b = append(b, `,"attempts":`...)
		b = strconv.AppendInt(b, int64(x.Attempts), 10)
	}
	b = appendRequest(b, "client_request", x.ClientRequest)
	b = appendRequest(b, "backend_request", x.BackendRequest)
	b = appendResponse(b, "backend_response", x.BackendResponse)
	b = appendResponse(b, "client_response", x.ClientResponse)
	if len(x.Dropped) > 0 {
		b = append(b, `,"dropped":`...)
		b = appendMarshal(b, x.Dropped)
	}
	if x.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonwire.AppendStringAsEncodingJSON(b, x.Error)
	}
	if x.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	return append(b, '}')
}

func appendRequest(b []byte, name string, r *Request) []byte {
	if r == nil {
		return b
	}
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `":{`...)
	first := true
	b = appendField(b, &first, "method", r.Method)
	b = appendField(b, &first, "path", r.Path)
	b = appendField(b, &first, "query", r.Query)
	b = appendHeader(b, &first, r.Header)
	b = appendPayload(b, &first, "body", "body_text", r.raw, r.Body, r.BodyText)
	return append(b, '}')
}

func appendResponse(b []byte, name string, r *Response) []byte {
	if r == nil {
		return b
	}
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `":{"status":`...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
	first := false
	b = appendHeader(b, &first, r.Header)
	b = appendPayload(b, &first, "body", "body_text", r.raw, r.Body, r.BodyText)
	if len(r.Events) > 0 {
		b = append(b, `,"events":[`...)
		for i := range r.Events {
			e := &r.Events[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"t":`...)
			b = strconv.AppendInt(b, e.T, 10)
			f := false
			b = appendField(b, &f, "event", e.Name)
			b = appendPayload(b, &f, "data", "text", e.raw, e.Data, e.Text)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if r.EventsDropped != 0 {
		b = append(b, `,"events_dropped":`...)
		b = strconv.AppendInt(b, int64(r.EventsDropped), 10)
	}
	if r.BodyDropped != 0 {
		b = append(b, `,"body_dropped":`...)
		b = strconv.AppendInt(b, int64(r.BodyDropped), 10)
	}
	return append(b, '}')
}

// appendField appends a string member unless it is empty (omitempty).
func appendField(b []byte, first *bool, name, v string) []byte {
	if v == "" {
		return b
	}
	b = appendKey(b, first, name)
	return jsonwire.AppendStringAsEncodingJSON(b, v)
}

func appendKey(b []byte, first *bool, name string) []byte {
	if !*first {
		b = append(b, ',')
	}
	*first = false
	b = append(b, '"')
	b = append(b, name...)
	return append(b, `":`...)
}

func appendHeader(b []byte, first *bool, h map[string][]string) []byte {
	if len(h) == 0 {
		return b
	}
	b = appendKey(b, first, "header")
	return appendMarshal(b, h) // small; encoding/json sorts the names
}

// appendPayload appends captured data as JSON (member data) when it is
// valid JSON, else as a string (member text). Data read back from a file
// (raw nil) is written as it was read.
func appendPayload(b []byte, first *bool, data, text string, raw []byte, rawJSON json.RawMessage, str string) []byte {
	switch {
	case raw == nil && rawJSON != nil:
		raw = rawJSON
	case raw == nil:
		return appendField(b, first, text, str)
	}
	if len(raw) == 0 {
		return b
	}
	if !gjson.ValidBytes(raw) {
		return appendField(b, first, text, string(raw))
	}
	b = appendKey(b, first, data)
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(b, raw...)
	}
	// Whitespace between tokens (a multi-line SSE data field): one record
	// per line allows no line break.
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return jsonwire.AppendStringAsEncodingJSON(b, string(raw))
	}
	return append(b, buf.Bytes()...)
}

func appendMarshal(b []byte, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return append(b, "null"...)
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
