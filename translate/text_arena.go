package translate

import "strings"

// textArena hands out copies of short byte strings cut from shared
// chunks, so that a decoder's many small strings (unescaped texts, stream
// deltas) are not an allocation each. The chunk is a strings.Builder: its
// buffer is not zeroed before use (unlike make's), and what was written to
// it never moves or changes, so the strings cut from it stay valid while it
// fills. A chunk is garbage once no string cut from it is in use; the arena
// holds only the one it fills, so a long stream's memory stays flat.
//
// A textArena must not be copied once used (it holds a strings.Builder).
type textArena struct {
	sb strings.Builder
}

// keep returns a copy of b. A string longer than a quarter of chunk gets an
// allocation of its own (a conversion, not zeroed either), so at most a
// quarter of a chunk is wasted.
func (a *textArena) keep(b []byte, chunk int) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > chunk/4 {
		return string(b)
	}
	if a.sb.Cap()-a.sb.Len() < len(b) {
		a.sb = strings.Builder{}
		a.sb.Grow(chunk)
	}
	n := a.sb.Len()
	a.sb.Write(b)
	return a.sb.String()[n:]
}
