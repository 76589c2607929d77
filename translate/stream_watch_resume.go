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
	swap   watchSwap
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

// watchSwap lets a StreamWatch judge an event that differs from the last
// one only in the value of its one choice's "delta" without scanning the
// rest again. Past its first members, an OpenAI Chat chunk repeats the
// bytes around the delta too ("choices":[{"index":0,"delta": before it,
// "logprobs":null,"finish_reason":null}]} after it); only the delta (the
// text or the arguments' next fragment) changes. The scan never reads a
// delta, it only validates it (jsonSkipValue), and it reads the bytes
// before the delta to the same state whatever follows them; so an event
// that is the last one's bytes before the delta, then a value
// jsonSkipValue accepts and that ends exactly where the last one's bytes
// after the delta begin, scans to what the last one gave. Any other event
// (a second choice, a finish reason, the usage chunk, a value that ends
// early or late) is scanned in full, and becomes the template when it
// qualifies. Events whose outcome holds offsets that are read (a type,
// usage object or sequence number span) or ends the stream (an error) are
// not kept, and neither are heads or tails past maxWatchPrefix, so memory
// stays flat.
type watchSwap struct {
	// kept is the last event without its delta's value: its bytes up to
	// the value (kept[:head]) and after it (kept[head:]). One buffer, so
	// that a stream allocates once for it.
	kept  []byte
	head  int      // 0: no template
	whole watchTop // what the last event gave
}

// swapped reports whether data is the kept event with another delta, and
// then sets t to what that event gave.
func (s *watchSwap) swapped(data []byte, t *watchTop) bool {
	h, tl := s.head, len(s.kept)-s.head
	if h == 0 || len(data) <= h+tl || string(data[:h]) != string(s.kept[:h]) || string(data[len(data)-tl:]) != string(s.kept[h:]) {
		return false
	}
	if end, ok := jsonSkipValue(data, h); !ok || end != len(data)-tl {
		return false
	}
	*t = s.whole
	return true
}

// keep makes data, whose scan succeeded and gave t, the template when its
// one choice had a delta, at data[delta.start:delta.end]; otherwise it
// drops the template.
func (s *watchSwap) keep(data []byte, delta jsonSpan, t *watchTop) {
	if delta.end == 0 || t.typ.kind != jsonAbsent || t.usage.kind == jsonObject || t.seq.kind != jsonAbsent || t.err ||
		delta.start > maxWatchPrefix || len(data)-delta.end > maxWatchPrefix {
		s.head = 0
		return
	}
	s.kept = append(append(s.kept[:0], data[:delta.start]...), data[delta.end:]...)
	s.head = delta.start
	s.whole = *t
	// A chunk of a stream asked for its usage carries "usage":null until
	// the last: kept, as its kind alone (only an object's bytes are
	// read), since its offsets move with the delta's length.
	s.whole.usage = jsonSpan{kind: t.usage.kind}
}
