package state

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Store on a Redis server, shared by every instance configured
// with the same server and prefix: a turn stored by one continues on
// another. Each record is one hash, {Prefix}r:{owner}:{id}, with fields p
// (the predecessor), t (the creation time, Unix ms) and d (the data), and
// a TTL renewed on each read. A chain is read in one round trip, by a
// script walking the predecessors on the server.
//
// The TTL is the only bound Redis stores apply; bound the server's memory
// with its own maxmemory (and an eviction policy such as volatile-lru).
type Redis struct {
	Client redis.UniversalClient
	// Prefix starts every key. "" is allowed.
	Prefix string
	// TTL as Memory's. 0: DefaultTTL.
	TTL time.Duration
	// Guard, when set, runs every call to the server (a circuit
	// breaker: limits.Breaker.Do), so a server that is down fails the
	// calls at once instead of each waiting for its timeout.
	Guard func(ctx context.Context, call func() error) error
}

var _ Store = (*Redis)(nil)

func (s *Redis) ttl() time.Duration {
	if s.TTL <= 0 {
		return DefaultTTL
	}
	return s.TTL
}

func (s *Redis) key(owner, id string) string {
	return s.Prefix + "r:" + strconv.Itoa(len(owner)) + ":" + owner + ":" + id
}

func (s *Redis) do(ctx context.Context, call func() error) error {
	if s.Guard == nil {
		return call()
	}
	return s.Guard(ctx, call)
}

// Put implements Store.
func (s *Redis) Put(ctx context.Context, rec Record) error {
	k := s.key(rec.Owner, rec.ID)
	return s.do(ctx, func() error {
		_, err := s.Client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, k)
			p.HSet(ctx, k, "p", rec.Previous, "t", rec.Created.UnixMilli(), "d", rec.Data)
			p.PExpire(ctx, k, s.ttl())
			return nil
		})
		return err
	})
}

// chainScript walks a chain from ARGV[1] (key prefix for the owner is
// ARGV[2]), renewing each TTL (ARGV[3] ms), at most ARGV[4] records. It
// returns {status, id, p, t, d, id, p, t, d, ...} newest first; status
// 0: complete, 1: a record is missing, 2: too long.
var chainScript = redis.NewScript(`
local out = {0}
local id = ARGV[1]
local n = 0
local max = tonumber(ARGV[4])
while id ~= '' do
  if n == max then out[1] = 2 return out end
  local k = ARGV[2] .. id
  local v = redis.call('HMGET', k, 'p', 't', 'd')
  if not v[3] then out[1] = 1 return out end
  redis.call('PEXPIRE', k, ARGV[3])
  table.insert(out, id) table.insert(out, v[1]) table.insert(out, v[2]) table.insert(out, v[3])
  id = v[1]
  n = n + 1
end
return out
`)

// Get implements Store.
func (s *Redis) Get(ctx context.Context, owner, id string) (Record, error) {
	recs, err := s.chain(ctx, owner, id, 1, true)
	if err != nil {
		return Record{}, err
	}
	return recs[0], nil
}

// Chain implements Store.
func (s *Redis) Chain(ctx context.Context, owner, id string, max int) ([]Record, error) {
	if max <= 0 {
		max = DefaultMaxChain
	}
	return s.chain(ctx, owner, id, max, false)
}

func (s *Redis) chain(ctx context.Context, owner, id string, max int, one bool) ([]Record, error) {
	if id == "" {
		return nil, ErrNotFound
	}
	var res []any
	err := s.do(ctx, func() error {
		v, err := chainScript.Run(ctx, s.Client, nil, id, s.key(owner, ""), s.ttl().Milliseconds(), max).Slice()
		res = v
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(res) == 0 {
		return nil, errors.New("state: unexpected script answer")
	}
	status, _ := res[0].(int64)
	if status == 1 {
		return nil, ErrNotFound
	}
	if status == 2 && !one {
		return nil, ErrChainTooLong
	}
	rest := res[1:]
	n := len(rest) / 4
	out := make([]Record, n)
	for i := range n {
		f := rest[4*i : 4*i+4]
		t, _ := strconv.ParseInt(str(f[2]), 10, 64)
		out[n-1-i] = Record{ID: str(f[0]), Owner: owner, Previous: str(f[1]), Created: time.UnixMilli(t), Data: []byte(str(f[3]))}
	}
	if one {
		return out[n-1:], nil
	}
	return out, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// Delete implements Store.
func (s *Redis) Delete(ctx context.Context, owner, id string) error {
	var n int64
	err := s.do(ctx, func() error {
		var err error
		n, err = s.Client.Del(ctx, s.key(owner, id)).Result()
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}
