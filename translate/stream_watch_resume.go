package translate

// maxWatchPrefix bounds the bytes a watchResume keeps: an OpenAI Chat
// chunk's members before its choices (id, object, created, model,
// system_fingerprint, service_tier) take a few hundred at most.
const maxWatchPrefix = 1024

// watchResume lets a StreamWatch skip what repeats from event to event. An
// OpenAI Chat stream's chunks differ almost only in their choices: the
// members before them (id, object, created, model, ...) repeat byte for
// byte, and validating them again would give the same result. So the scan
// of an event keeps its bytes up to the "choices" member name, together
// with the comma before that name, and what those members gave; the next
// event that starts with the same bytes is scanned from there. The comma
// is kept so that the prefix ends where the state of the scan is settled:
// a number or literal ends at the byte after it, and after a comma only a
// member name may follow. Events without members before their choices
// (Gemini's, which begin with candidates) or without choices (Anthropic's,
// Responses') keep nothing.
type watchResume struct {
	prefix []byte   // the event up to and including the comma before "choices"; empty: none
	top    watchTop // what the members in prefix gave
}

// start returns the members reader for data, resumed after the prefix
// when data starts with it. t takes the state kept with the prefix.
// resumed reports whether it did; ok is false when data is already known
// to be malformed.
func (r *watchResume) start(data []byte, t *watchTop) (m jsonMembers, resumed, ok bool) {
	if n := len(r.prefix); n > 0 && len(data) > n && string(data[:n]) == string(r.prefix) {
		// n is 0: the reader must not want a comma, which the prefix
		// had; but a member name must follow it.
		i := jsonSkipSpace(data, n)
		if i >= len(data) || data[i] != '"' {
			return m, true, false
		}
		*t = r.top
		return jsonMembers{data: data, i: i}, true, true
	}
	i := jsonSkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return m, false, false
	}
	return jsonOpenObject(data, i), false, true
}

// record keeps data up to the comma at or after at (the end of the
// member before "choices"; m.n counts the members read, the choices'
// name included) with t, the state the members before gave.
func (r *watchResume) record(data []byte, at int, m *jsonMembers, t *watchTop) {
	if m.n < 2 {
		return // nothing before the choices to skip
	}
	i := jsonSkipSpace(data, at)
	if i >= len(data) || data[i] != ',' || i+1 > maxWatchPrefix {
		return
	}
	r.prefix = append(r.prefix[:0], data[:i+1]...)
	r.top = *t
}
