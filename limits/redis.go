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

// takeAllScript checks every KEYS[i] against ARGV[3i-2..3i] (n, limit,
// ttl; n = 0 only checks the counter is below the limit), then takes them
// all; it returns the 1-based index of the step refused (0: none) and the
// counters' values.
var takeAllScript = redis.NewScript(`
local vals = {}
for i, key in ipairs(KEYS) do
  local n, limit = tonumber(ARGV[3*i-2]), tonumber(ARGV[3*i-1])
  local v = tonumber(redis.call('GET', key) or '0')
  vals[i] = v
  if (n == 0 and v >= limit) or (n > 0 and v + n > limit) then
    return {i, unpack(vals)}
  end
end
for i, key in ipairs(KEYS) do
  local n, ttl = tonumber(ARGV[3*i-2]), tonumber(ARGV[3*i])
  if n > 0 then
    vals[i] = redis.call('INCRBY', key, n)
    if ttl > 0 and redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, ttl) end
  end
end
return {0, unpack(vals)}
`)

// addAllScript adds ARGV[2i-1] to KEYS[i], with ARGV[2i] as takeScript's
// ttl.
var addAllScript = redis.NewScript(`
for i, key in ipairs(KEYS) do
  redis.call('INCRBY', key, ARGV[2*i-1])
  local ttl = tonumber(ARGV[2*i])
  if ttl > 0 and redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, ttl) end
end
return 0
`)

// TakeAll implements Batcher: one round trip.
func (s *RedisStore) TakeAll(ctx context.Context, steps []Step) ([]int64, int, error) {
	keys := make([]string, len(steps))
	args := make([]any, 0, 3*len(steps))
	for i, st := range steps {
		keys[i] = s.Prefix + st.Key
		args = append(args, st.N, st.Limit, st.TTL.Milliseconds())
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
	args := make([]any, 0, 2*len(deltas))
	for i, d := range deltas {
		keys[i] = s.Prefix + d.Key
		args = append(args, d.N, d.TTL.Milliseconds())
	}
	return addAllScript.Run(ctx, s.Client, keys, args...).Err()
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
)
