package stream

import "sync"

// A stream's output buffer is as large as the largest write it framed: a
// backend ahead of its client arrives in writes of up to 32 KiB
// (reverse_proxy's copy buffer), which translate into as much client
// output. Kept by each stream between writes, that is tens of KiB per open
// stream however little it is sending, so memory per stream would grow
// with what the stream has sent. Instead the buffers are lent from one
// pool for the span of a write and given back once the caller has written
// the bytes to the client (ReleaseOutput): a stream waiting on its backend
// holds none, and busy streams share a few warm buffers.

// maxPooledOutput bounds the buffers the pool keeps; one grown by a rare
// huge event is left to the garbage collector.
const maxPooledOutput = 256 << 10

// outputPool holds empty byte buffers, as *[]byte so that putting one back
// does not allocate.
var outputPool sync.Pool

// borrowOutput returns an empty buffer from the pool, or a new one.
func borrowOutput() *[]byte {
	if b, ok := outputPool.Get().(*[]byte); ok {
		return b
	}
	return new([]byte)
}

// returnOutput gives b back to the pool. Nothing may use b afterwards.
func returnOutput(b *[]byte) {
	if b == nil || cap(*b) == 0 || cap(*b) > maxPooledOutput {
		return
	}
	*b = (*b)[:0]
	outputPool.Put(b)
}

// Releaser is implemented by outputs and watchers whose buffer is lent
// from a shared pool: Release gives it back, invalidating what their last
// call returned. They borrow one again when they next need it.
type Releaser interface {
	Release()
}

// ReleaseOutput gives o's buffer back to the pool if it has one to give.
// A caller calls it once it has written o's bytes to the client, so that
// a stream waiting on its backend holds no output buffer.
func ReleaseOutput(o Output) {
	if r, ok := o.(Releaser); ok {
		r.Release()
	}
}

// Interface guards
var (
	_ Releaser = (*SSEOutput)(nil)
	_ Releaser = (*JSONArrayOutput)(nil)
	_ Releaser = (*PassWatcher)(nil)
)
