package translate

// The Anthropic decoder's small IR values (parts, tool calls, tool results)
// come from slabs shared by the request rather than one allocation each:
// fewer allocations, and fewer objects for the garbage collector to track
// while the request is in use.

// carve returns a copy of parts (nil when empty) cut from a slab the
// request's parts share, so that a message's blocks cost no allocation of
// their own, nor a slice regrown block after block. The copy's capacity
// ends with it: an append to it cannot reach the next one.
func (d *anthRequestDecoder) carve(parts []Part) []Part {
	n := len(parts)
	if n == 0 {
		return nil
	}
	if cap(d.partSlab)-len(d.partSlab) < n {
		d.partSlab = make([]Part, 0, max(n, anthPartChunk))
	}
	start := len(d.partSlab)
	d.partSlab = append(d.partSlab, parts...)
	return d.partSlab[start : start+n : start+n]
}

// text1 is carve for a single text part.
func (d *anthRequestDecoder) text1(s string, form jsonForm) []Part {
	p := [1]Part{{Type: PartText, Text: s, textForm: form}}
	return d.carve(p[:])
}

// anthPartChunk is the number of parts a slab holds.
const anthPartChunk = 32

// newToolCall and newToolResult hand out values from slabs, as carve does
// parts.
func (d *anthRequestDecoder) newToolCall() *ToolCall {
	if len(d.calls) == cap(d.calls) {
		d.calls = make([]ToolCall, 0, anthPartChunk/2)
	}
	d.calls = d.calls[:len(d.calls)+1]
	return &d.calls[len(d.calls)-1]
}

func (d *anthRequestDecoder) newToolResult() *ToolResult {
	if len(d.results) == cap(d.results) {
		d.results = make([]ToolResult, 0, anthPartChunk/2)
	}
	d.results = d.results[:len(d.results)+1]
	return &d.results[len(d.results)-1]
}
