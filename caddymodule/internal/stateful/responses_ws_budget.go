package stateful

import (
	"container/list"
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/louter/louter/state"
)

// What the Responses WebSockets of the process hold, counted once for all
// louter handlers and config reloads together: a socket opened under a
// config that was since replaced stays open (its connection was hijacked,
// so Caddy's shutdown does not wait for it), and a count per handler would
// let every reload add another budget.
//
//   - A socket keeps its own turns, bounded by websocket_max_bytes; all
//     sockets' turns together are bounded by websocket_total_bytes. Past
//     it, the turns of the least recently used sockets are dropped, whole,
//     rather than a turn refused: a socket whose turns were dropped keeps
//     working (its next continuation gets previous_response_not_found,
//     which Codex answers by resending the whole conversation), whereas a
//     refusal would fail the turns of the sockets in use while idle ones
//     hold the memory. A socket's turns go together because a continuation
//     needs its whole chain: dropping the oldest turn of each socket would
//     break every chain and free little.
//   - A client (stateOwner) has at most websocket_max_per_client sockets
//     open; past it, the upgrade is refused (responses_ws.go).
//
// Each handler applies its own bounds to the process's count: a socket of a
// handler with a smaller websocket_total_bytes drops other sockets' turns
// until the count fits that handler's bound.

// wsAccount is the process's count.
type wsAccount struct {
	mu       sync.Mutex
	lru      list.List      // of *socketMemory; front: the most recently used
	bytes    int64          // what the sockets' turns hold, as state.Memory counts it
	perOwner map[string]int // the sockets open, by owner
}

// wsSockets is the one wsAccount of the process.
var wsSockets wsAccount

// socketMemory is one socket's turns: a state.Memory whose bytes wsSockets
// counts. Its lock is taken after the account's, never before.
type socketMemory struct {
	acct  *wsAccount
	owner string
	total int64         // the handler's websocket_total_bytes
	el    *list.Element // in acct.lru; nil once closed (acct.mu)

	// onDrop, when set, is told how many sockets' turns a Put of this
	// socket dropped.
	onDrop func(n int)

	mu   sync.Mutex
	mem  *state.Memory // nil once closed; replaced by an empty one when dropped
	held int64         // what acct.bytes counts of mem
	// dropped: websocket_total_bytes dropped the socket's turns once, which
	// a continuation it no longer finds is told (turn.go).
	dropped bool
}

// open registers a socket of owner, unless owner already has perClient
// open: then nil and the number open.
func (a *wsAccount) open(owner string, perClient int, maxBytes, total int64, ttl time.Duration) (*socketMemory, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := a.perOwner[owner]; n >= perClient {
		return nil, n
	}
	if a.perOwner == nil {
		a.perOwner = map[string]int{}
	}
	a.perOwner[owner]++
	m := &socketMemory{acct: a, owner: owner, total: total, mem: &state.Memory{MaxBytes: min(maxBytes, total), TTL: ttl}}
	m.el = a.lru.PushFront(m)
	return m, 0
}

// close lets go of the socket's turns and its place in the count.
func (m *socketMemory) close() {
	a := m.acct
	a.mu.Lock()
	defer a.mu.Unlock()
	if m.el == nil {
		return
	}
	a.lru.Remove(m.el)
	m.el = nil
	m.mu.Lock()
	a.bytes -= m.held
	m.mem, m.held = nil, 0
	m.mu.Unlock()
	if a.perOwner[m.owner]--; a.perOwner[m.owner] <= 0 {
		delete(a.perOwner, m.owner)
	}
}

// Put keeps a turn of the socket (state.Memory's Put), then fits the count
// in the socket's websocket_total_bytes.
func (m *socketMemory) Put(ctx context.Context, rec state.Record) error {
	m.mu.Lock()
	if m.mem == nil {
		m.mu.Unlock()
		return nil
	}
	err := m.mem.Put(ctx, rec)
	d := m.resync()
	m.mu.Unlock()
	if n := m.acct.used(m, d); n > 0 && m.onDrop != nil {
		m.onDrop(n)
	}
	return err
}

// Chain reads a chain of the socket's turns (state.Memory's Chain).
func (m *socketMemory) Chain(ctx context.Context, owner, id string, max int) ([]state.Record, error) {
	m.mu.Lock()
	if m.mem == nil {
		m.mu.Unlock()
		return nil, state.ErrNotFound
	}
	c, err := m.mem.Chain(ctx, owner, id, max)
	d := m.resync() // a read sweeps expired turns
	m.mu.Unlock()
	m.acct.used(m, d)
	return c, err
}

// resync returns how much more mem holds than the account counts, and
// counts it. m.mu is held.
func (m *socketMemory) resync() int64 {
	b := m.mem.Bytes()
	d := b - m.held
	m.held = b
	return d
}

// used counts d more bytes held by m, makes m the most recently used
// socket, and, while the sockets hold more than m's websocket_total_bytes,
// drops the turns of the least recently used others. It returns how many
// sockets' turns it dropped.
func (a *wsAccount) used(m *socketMemory, d int64) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.bytes += d
	if m.el == nil {
		return 0 // closed meanwhile: close took its bytes off
	}
	a.lru.MoveToFront(m.el)
	n := 0
	for el := a.lru.Back(); el != nil && el != m.el && a.bytes > m.total; el = el.Prev() {
		v := el.Value.(*socketMemory)
		v.mu.Lock()
		if v.mem != nil && v.held > 0 {
			a.bytes -= v.held
			v.mem = &state.Memory{MaxBytes: v.mem.MaxBytes, TTL: v.mem.TTL}
			v.dropped = true
			v.held = 0
			n++
		}
		v.mu.Unlock()
	}
	return n
}

// held is what all sockets' turns hold, and the sockets open.
func (a *wsAccount) held() (bytes int64, sockets int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bytes, a.lru.Len()
}

// droppedSocketTurns logs that websocket_total_bytes dropped n sessions'
// turns: a warning the first time in this handler, then at debug.
func (s *stateStore) droppedSocketTurns(n int) {
	held, open := wsSockets.held()
	level := zapcore.DebugLevel
	if !s.dropWarned.Swap(true) {
		level = zapcore.WarnLevel
	}
	if c := s.logger.Check(level, "the WebSocket sessions' turns reached websocket_total_bytes: the least recently used sessions' turns were dropped, and continuing them resends the whole conversation"); c != nil {
		c.Write(zap.Int("sessions_dropped", n), zap.Int64("bytes_held", held), zap.Int("sessions_open", open), zap.Int64("websocket_total_bytes", s.wsTotal))
	}
}

// WebSocketTurns is what all Responses WebSocket sessions of the process
// hold of their turns, in bytes as websocket_total_bytes counts them, and
// the sessions open: for the handler's integration tests.
func WebSocketTurns() (bytes int64, sessions int) { return wsSockets.held() }

// wasDropped reports whether websocket_total_bytes dropped the socket's
// turns.
func (m *socketMemory) wasDropped() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dropped
}
