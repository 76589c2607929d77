package stream

import "sync"

// The client bytes of a stream are framed into one buffer per stream,
// reset after every write. Grown afresh for each stream, that buffer was
// a measurable share of a request's cost (issue 17): a 32 KiB write of
// the upstream becomes as many client bytes, reached by repeated growth.
// Buffers are therefore kept in a pool across streams: an output takes one
// at its first frame and gives it back when released at the end of its
// stream.

// maxPooledFrameBuf bounds the buffers kept: one that held a huge event
// (a tool call's whole arguments) is left to the collector.
const maxPooledFrameBuf = 64 << 10

// frameBufPool holds *[]byte of length 0.
var frameBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// getFrameBuf returns an empty buffer from the pool.
func getFrameBuf() []byte { return (*frameBufPool.Get().(*[]byte))[:0] }

// putFrameBuf gives a buffer back to the pool, unless it is too large.
func putFrameBuf(b []byte) {
	if cap(b) == 0 || cap(b) > maxPooledFrameBuf {
		return
	}
	b = b[:0]
	frameBufPool.Put(&b)
}

// Releaser is an Output whose buffer can go back to a pool shared by all
// streams.
type Releaser interface {
	// Release gives the buffer back. The bytes Bytes returned are no
	// longer valid; the output may be written again (it takes another).
	Release()
}

// ReleaseOutput releases o's buffer when o is a Releaser. Call it once
// the stream's bytes have been written to the client.
func ReleaseOutput(o Output) {
	if r, ok := o.(Releaser); ok {
		r.Release()
	}
}
