package translate

// The Interactions API reports a search or fetch as a step pair:
//
//	{"type":"google_search_call","id":"…","arguments":{"queries":["…"]}}
//	{"type":"google_search_result","call_id":"…","result":[…],"is_error":true?}
//	{"type":"url_context_call","id":"…","arguments":{"urls":["…"]}}
//	{"type":"url_context_result","call_id":"…","result":[{"url":"…","status":"success"}]}
//
// A google_search_result holds rendered search suggestions, not pages:
// the pages another backend found have no place there, and an
// Interactions client gets the query and whether it failed. In a stream
// each step comes whole in its step.start, then step.stop.

// interactionsAppendServerToolStep appends a server tool part as its step.
func interactionsAppendServerToolStep(b []byte, p *Part) []byte {
	u := p.Server
	fetch := u.Kind == ServerWebFetch
	if p.Type == PartServerToolCall {
		if fetch {
			b = append(b, `{"type":"url_context_call","id":`...)
			b = appendJSONString(b, u.ID)
			b = append(b, `,"arguments":{"urls":`...)
			b = appendStringList(b, []string{u.URL})
		} else {
			b = append(b, `{"type":"google_search_call","id":`...)
			b = appendJSONString(b, u.ID)
			b = append(b, `,"arguments":{"queries":`...)
			b = appendStringList(b, []string{u.Query})
		}
		return append(b, "}}"...)
	}
	if fetch {
		b = append(b, `{"type":"url_context_result","call_id":`...)
	} else {
		b = append(b, `{"type":"google_search_result","call_id":`...)
	}
	b = appendJSONString(b, u.ID)
	b = append(b, `,"result":[`...)
	if fetch {
		status := "success"
		if u.ErrorCode != "" {
			status = "error"
		}
		for i := range u.Results {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"url":`...)
			b = appendJSONString(b, u.Results[i].URL)
			b = append(b, `,"status":`...)
			b = appendJSONString(b, status)
			b = append(b, '}')
		}
	}
	b = append(b, ']')
	if u.ErrorCode != "" {
		b = append(b, `,"is_error":true`...)
	}
	return append(b, '}')
}

// ShowsServerToolResults implements ServerToolResultCodec.
func (interactionsCodec) ShowsServerToolResults() bool { return true }
