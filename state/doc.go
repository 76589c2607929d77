// Package state stores the turns of stateful conversations — the
// Responses API's stored responses (previous_response_id), and any other
// protocol whose server keeps a chain of turns (Gemini's
// previous_interaction_id) — in memory or in Redis. It imports nothing
// from Caddy and can be used and tested without a server.
//
// A Record is one turn, stored once: its own data (the caller's encoding,
// opaque to the store) and the id of the turn it continues. A conversation
// of n turns therefore costs the sum of its turns' sizes, not n² — a chain
// is rebuilt by walking the predecessors (Store.Chain).
//
// Every record belongs to an owner, the identity of the client that made
// it (a client key's name, or a hash of the credential it presented).
// Every read, continuation and deletion names the owner, and a record of
// another owner is reported as ErrNotFound, exactly like one that never
// existed, so a client cannot even learn that another client's id exists.
// Ids are minted by NewID from crypto/rand, so they cannot be guessed
// either.
//
// Records expire: a record not read (Get, or as part of a Chain) for the
// store's TTL is gone. The memory store is also bounded by bytes: past
// MaxBytes it evicts the least recently used records. A chain whose older
// turn was evicted or expired is reported as ErrNotFound, naming the id
// asked for. Redis stores rely on the TTL and on the server's own
// maxmemory policy.
//
// Implementations are safe for concurrent use.
package state
