package translate

// anthEventScan is what the stream decoder's fast path reads from one
// Anthropic stream event, located by one validating pass over it (see
// json_scan.go). The fast path takes the events a stream is made of —
// content_block_delta, content_block_stop, ping, message_stop — in their
// common shape: plain member names, no member twice, delta an object, index
// an integer. Any other event, valid or not, is left to the gjson path
// (decodeGJSON), which defines the behaviour.
type anthEventScan struct {
	typ   jsonSpan
	index int64

	deltaType   jsonSpan
	text        jsonSpan
	thinking    jsonSpan
	signature   jsonSpan
	partialJSON jsonSpan
}

// scan reads data. It returns false when data is not valid JSON or not of
// the common shape.
func (e *anthEventScan) scan(data []byte) bool {
	*e = anthEventScan{}
	i := jsonSkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	m := jsonOpenObject(data, i)
	var seen uint8
	for {
		name, esc, more := m.next()
		if !more {
			break
		}
		if esc {
			return false
		}
		var bit uint8
		switch string(name) {
		case "type":
			bit = oaiSeen1
			sp, ok := m.value()
			if !ok || seen&bit != 0 {
				return false
			}
			e.typ = sp
		case "index":
			bit = oaiSeen2
			sp, ok := m.value()
			if !ok || seen&bit != 0 {
				return false
			}
			switch sp.kind {
			case jsonNull: // reads as 0
			case jsonNumber:
				if e.index, ok = jsonSmallInt(sp.bytes(data)); !ok {
					return false
				}
			default:
				return false
			}
		case "delta":
			bit = oaiSeen3
			if seen&bit != 0 || m.peek() != jsonObject {
				return false
			}
			j, ok := e.scanDelta(data, m.i)
			if !ok {
				return false
			}
			m.i = j
		case "error":
			return false // an error event, or a bare error line
		default:
			if _, ok := m.value(); !ok {
				return false
			}
		}
		seen |= bit
	}
	return !m.bad && jsonScanTail(data, m.i)
}

func (e *anthEventScan) scanDelta(data []byte, i int) (int, bool) {
	m := jsonOpenObject(data, i)
	var seen uint8
	for {
		name, esc, more := m.next()
		if !more {
			break
		}
		if esc {
			return 0, false
		}
		var bit uint8
		var dst *jsonSpan
		switch string(name) {
		case "type":
			bit, dst = oaiSeen1, &e.deltaType
		case "text":
			bit, dst = oaiSeen2, &e.text
		case "thinking":
			bit, dst = oaiSeen3, &e.thinking
		case "signature":
			bit, dst = oaiSeen4, &e.signature
		case "partial_json":
			bit, dst = oaiSeen5, &e.partialJSON
		}
		if seen&bit != 0 {
			return 0, false
		}
		seen |= bit
		sp, ok := m.value()
		if !ok {
			return 0, false
		}
		if dst != nil {
			*dst = sp
		}
	}
	return m.i, !m.bad
}

// anthFastEvent tells whether an event name is one the fast path takes.
func anthFastEvent(name []byte) bool {
	switch string(name) {
	case "content_block_delta", "content_block_stop", "message_stop", "ping":
		return true
	}
	return false
}
