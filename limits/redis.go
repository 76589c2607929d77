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

// Interface guard
var _ Store = (*RedisStore)(nil)
