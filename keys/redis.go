package keys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// RedisStore is a Store in Redis: the hash PREFIX{keys} (name → the entry
// as JSON), the counter PREFIX{keys}:version (one Redis Cluster slot), and
// the channel PREFIX keys:changed, on which every write publishes the new
// version. Each write is one Lua script, atomic.
type RedisStore struct {
	Client redis.UniversalClient
	Prefix string
}

func (s *RedisStore) hash() string    { return s.Prefix + "{keys}" }
func (s *RedisStore) version() string { return s.Prefix + "{keys}:version" }
func (s *RedisStore) channel() string { return s.Prefix + "keys:changed" }

// writeScript sets (ARGV[1] = "set") or deletes the field ARGV[2] of
// KEYS[1] with the value ARGV[3], when the field's present value is
// ARGV[4] ("" : absent; "*": any present value); then bumps KEYS[2] and
// publishes it on ARGV[5]. It returns the new version, or 0 when the
// condition failed.
var writeScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[2])
local want = ARGV[4]
if want == '' then
  if cur then return 0 end
elseif not cur then
  return 0
elseif want ~= '*' and cur ~= want then
  return -1
end
if ARGV[1] == 'set' then
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
else
  redis.call('HDEL', KEYS[1], ARGV[2])
end
local v = redis.call('INCR', KEYS[2])
redis.call('PUBLISH', ARGV[5], v)
return v
`)

func (s *RedisStore) write(ctx context.Context, op, name, value, want string) (int64, error) {
	return writeScript.Run(ctx, s.Client, []string{s.hash(), s.version()}, op, name, value, want, s.channel()).Int64()
}

// Load implements Store: the table and its version in one transaction.
func (s *RedisStore) Load(ctx context.Context) (Table, error) {
	var all *redis.MapStringStringCmd
	var ver *redis.StringCmd
	_, err := s.Client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		all = p.HGetAll(ctx, s.hash())
		ver = p.Get(ctx, s.version())
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return Table{}, err
	}
	t := Table{Entries: make(map[string]Entry, len(all.Val()))}
	t.Version, _ = ver.Int64()
	for name, v := range all.Val() {
		var e Entry
		if err := json.Unmarshal([]byte(v), &e); err != nil {
			return Table{}, fmt.Errorf("keys: entry %q in redis: %w", name, err)
		}
		t.Entries[name] = e
	}
	return t, nil
}

// Version implements Store.
func (s *RedisStore) Version(ctx context.Context) (int64, error) {
	v, err := s.Client.Get(ctx, s.version()).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return v, err
}

// Create implements Store.
func (s *RedisStore) Create(ctx context.Context, e Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	v, err := s.write(ctx, "set", e.Name, string(b), "")
	if err == nil && v == 0 {
		err = ErrExists
	}
	return err
}

// Update implements Store: read, apply f, and write if nobody wrote the
// entry in between (else start over, a few times).
func (s *RedisStore) Update(ctx context.Context, name string, f func(*Entry) error) error {
	for range 5 {
		cur, err := s.Client.HGet(ctx, s.hash(), name).Result()
		if errors.Is(err, redis.Nil) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		var e Entry
		if err := json.Unmarshal([]byte(cur), &e); err != nil {
			return fmt.Errorf("keys: entry %q in redis: %w", name, err)
		}
		if err := f(&e); err != nil {
			return err
		}
		e.Name = name
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		v, err := s.write(ctx, "set", name, string(b), cur)
		switch {
		case err != nil:
			return err
		case v == 0:
			return ErrNotFound // deleted meanwhile
		case v > 0:
			return nil
		}
	}
	return errors.New("keys: the entry kept changing; try again")
}

// Delete implements Store.
func (s *RedisStore) Delete(ctx context.Context, name string) error {
	v, err := s.write(ctx, "del", name, "", "*")
	if err == nil && v == 0 {
		err = ErrNotFound
	}
	return err
}

// Changes implements Notifier: one subscription to the channel, until
// ctx ends. A dropped connection is resubscribed by go-redis; what was
// published meanwhile is missed, which the watcher's poll catches.
func (s *RedisStore) Changes(ctx context.Context) <-chan struct{} {
	out := make(chan struct{}, 1)
	sub := s.Client.Subscribe(ctx, s.channel())
	go func() {
		defer sub.Close()
		ch := sub.Channel()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-ch:
				if !ok {
					return
				}
				select {
				case out <- struct{}{}:
				default: // one pending signal is enough
				}
			}
		}
	}()
	return out
}

// Interface guards
var (
	_ Store    = (*RedisStore)(nil)
	_ Notifier = (*RedisStore)(nil)
)
