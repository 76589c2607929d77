package limits

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisStore is a Store in Redis, shared by every gateway instance that
// uses the same server and prefix. Each operation is one Lua script, which
// Redis runs atomically: no instance can slip between a check and an add.
// Its concurrency slots are leases (Leaser), so an instance that dies
// mid-stream does not hold a client's slot for good.
type RedisStore struct {
	Client redis.UniversalClient
	// Prefix starts every key, so several deployments can share a server.
	Prefix string
}

// takeScript adds ARGV[1] to KEYS[1] if the sum stays at or below ARGV[2];
// a counter without an expiry gets ARGV[3] milliseconds (0: none).
var takeScript = redis.NewScript(`
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local n, limit, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if v + n > limit then return {v, 0} end
v = redis.call('INCRBY', KEYS[1], n)
if ttl > 0 and redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return {v, 1}
`)

// addScript adds ARGV[1] to KEYS[1], setting the expiry as takeScript.
var addScript = redis.NewScript(`
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = tonumber(ARGV[2])
if ttl > 0 and redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return v
`)

// takeAllScript checks every KEYS[i] against ARGV[4i-3..4i] (n, limit,
// ttl, slot; n = 0 only checks the counter is below the limit), then
// takes them all; it returns the 1-based index of the step refused (0:
// none) and the counters' values. A step with a slot is a sorted set of
// leases scored by their expiry in milliseconds of the server's clock
// (one clock for every instance, however theirs drift): its expired
// members are dropped before they are counted, and the slot joins with an
// expiry ttl (the lease) from now. The set itself expires a lease after
// its last change, so an idle one does not stay behind.
var takeAllScript = redis.NewScript(`
redis.replicate_commands()
local now
local function nowms()
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now
end
local vals = {}
for i, key in ipairs(KEYS) do
  local n, limit, slot = tonumber(ARGV[4*i-3]), tonumber(ARGV[4*i-2]), ARGV[4*i]
  local v
  if slot ~= '' then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', nowms())
    v = redis.call('ZCARD', key)
  else
    v = tonumber(redis.call('GET', key) or '0')
  end
  vals[i] = v
  if (n == 0 and v >= limit) or (n > 0 and v + n > limit) then
    return {i, unpack(vals)}
  end
end
for i, key in ipairs(KEYS) do
  local n, ttl, slot = tonumber(ARGV[4*i-3]), tonumber(ARGV[4*i-1]), ARGV[4*i]
  if slot ~= '' then
    redis.call('ZADD', key, nowms() + ttl, slot)
    if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
    vals[i] = vals[i] + 1
  elseif n > 0 then
    vals[i] = redis.call('INCRBY', key, n)
    if ttl > 0 and redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, ttl) end
  end
end
return {0, unpack(vals)}
`)

// addAllScript adds ARGV[3i-2] to KEYS[i], with ARGV[3i-1] as
// takeScript's ttl, or, when ARGV[3i] names a slot, removes that slot
// from the set KEYS[i].
var addAllScript = redis.NewScript(`
for i, key in ipairs(KEYS) do
  local slot = ARGV[3*i]
  if slot ~= '' then
    redis.call('ZREM', key, slot)
  else
    redis.call('INCRBY', key, ARGV[3*i-2])
    local ttl = tonumber(ARGV[3*i-1])
    if ttl > 0 and redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, ttl) end
  end
end
return 0
`)

// renewScript moves the expiry of the slot ARGV[1] in the set KEYS[1] to
// ARGV[2] milliseconds from now, if it is still there; the set lives at
// least as long.
var renewScript = redis.NewScript(`
redis.replicate_commands()
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local t = redis.call('TIME')
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ttl, ARGV[1])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
`)

// TakeAll implements Batcher: one round trip.
func (s *RedisStore) TakeAll(ctx context.Context, steps []Step) ([]int64, int, error) {
	keys := make([]string, len(steps))
	args := make([]any, 0, 4*len(steps))
	for i, st := range steps {
		keys[i] = s.Prefix + st.Key
		args = append(args, st.N, st.Limit, st.TTL.Milliseconds(), st.Slot)
	}
	r, err := takeAllScript.Run(ctx, s.Client, keys, args...).Int64Slice()
	if err != nil {
		return nil, 0, err
	}
	if len(r) < 1 || int(r[0]) > len(steps) {
		return nil, 0, errors.New("limits: unexpected reply from redis")
	}
	values := make([]int64, len(steps))
	copy(values, r[1:])
	return values, int(r[0]) - 1, nil
}

// AddAll implements Batcher: one round trip.
func (s *RedisStore) AddAll(ctx context.Context, deltas []Delta) error {
	keys := make([]string, len(deltas))
	args := make([]any, 0, 3*len(deltas))
	for i, d := range deltas {
		keys[i] = s.Prefix + d.Key
		args = append(args, d.N, d.TTL.Milliseconds(), d.Slot)
	}
	return addAllScript.Run(ctx, s.Client, keys, args...).Err()
}

// Renew implements Leaser: one round trip.
func (s *RedisStore) Renew(ctx context.Context, key, slot string, lease time.Duration) error {
	return renewScript.Run(ctx, s.Client, []string{s.Prefix + key}, slot, lease.Milliseconds()).Err()
}

// Release implements Leaser.
func (s *RedisStore) Release(ctx context.Context, key, slot string) error {
	return s.Client.ZRem(ctx, s.Prefix+key, slot).Err()
}

// Take implements Store.
func (s *RedisStore) Take(ctx context.Context, key string, n, limit int64, ttl time.Duration) (int64, bool, error) {
	r, err := takeScript.Run(ctx, s.Client, []string{s.Prefix + key}, n, limit, ttl.Milliseconds()).Int64Slice()
	if err != nil {
		return 0, false, err
	}
	if len(r) != 2 {
		return 0, false, errors.New("limits: unexpected reply from redis")
	}
	return r[0], r[1] == 1, nil
}

// Add implements Store.
func (s *RedisStore) Add(ctx context.Context, key string, n int64, ttl time.Duration) (int64, error) {
	return addScript.Run(ctx, s.Client, []string{s.Prefix + key}, n, ttl.Milliseconds()).Int64()
}

// Get implements Store.
func (s *RedisStore) Get(ctx context.Context, key string) (int64, error) {
	v, err := s.Client.Get(ctx, s.Prefix+key).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return v, err
}

// Interface guards
var (
	_ Store   = (*RedisStore)(nil)
	_ Batcher = (*RedisStore)(nil)
	_ Leaser  = (*RedisStore)(nil)
)
