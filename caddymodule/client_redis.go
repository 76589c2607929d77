package caddymodule

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/louter/louter/limits"
)

// RedisCounters keeps the limit counters in Redis instead of the process's
// memory, so several Caddy instances behind any balancer enforce one
// limit: every instance configured with the same server and prefix counts
// into the same counters, each operation one atomic Lua script. The usage
// ledger is kept there too (written in the background, see
// limits.RedisLedger), and so are the keys created through the admin API
// when managed_keys is on (keys_admin.go) and the stored responses, with
// or without a key table or limits (stateful_host.go).
type RedisCounters struct {
	// The server, as host:port or a redis:// or rediss:// URL.
	Address string `json:"address"`

	// The server's password; placeholders such as {env.REDIS_PASSWORD}
	// are resolved when the configuration loads.
	Password string `json:"password,omitempty"`

	// The database number. Default: 0.
	DB int `json:"db,omitempty"`

	// What every key starts with, so deployments can share a server.
	// Default: "louter:".
	Prefix string `json:"prefix,omitempty"`

	// How long one operation may take (dial, write, read) before it
	// counts as failed. Default: 250ms.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// What to do with a request when Redis cannot be reached: "open"
	// (default) admits it uncounted, "closed" refuses it with 503 in the
	// client's protocol. Either way the failure is counted (the ledger
	// endpoint's store_errors). After a failure the requests do not each
	// wait for Redis: for a cool-down (1s, doubling up to 30s while it
	// stays down) they are admitted or refused at once, then one request
	// tries Redis again. Its going down and coming back are logged once
	// each.
	OnError string `json:"on_error,omitempty"`

	// How long a concurrency slot (a client's or route's concurrent
	// limit) stays taken when nothing renews it. A request renews its
	// slot every third of the lease while it runs, so a slot held by an
	// instance that died mid-stream, or whose release Redis missed, is
	// free again within one lease. At least three times the timeout.
	// Default: 30s.
	Lease caddy.Duration `json:"lease,omitempty"`

	// How often each instance writes the usage it recorded to the
	// shared ledger in Redis: one transaction per interval, off the
	// request path. What an instance that crashes had not written yet is
	// lost: at most this long's usage. Default: 1s.
	LedgerFlush caddy.Duration `json:"ledger_flush,omitempty"`

	// How long a day of the shared ledger is kept after its last write.
	// Default: 400 days.
	LedgerRetention caddy.Duration `json:"ledger_retention,omitempty"`
}

// redisConn is what louter keeps on one Redis server: the limiter, the
// shared ledger, the client the key store uses, and close, which writes
// the ledger's queue and closes the connections.
type redisConn struct {
	limiter *limits.Limiter
	ledger  *limits.RedisLedger
	client  *redis.Client
	prefix  string
	server  string // host:port/db: with the prefix, which ledger it is (ledger_admin.go)
	close   func()
}

// connect makes a limiter and a ledger on the configured server, behind
// a circuit breaker that logs to logger; the handler's Cleanup calls the
// close function.
func (rc *RedisCounters) connect(logger *zap.Logger) (*redisConn, error) {
	if rc.Address == "" {
		return nil, errors.New("redis: an address is required")
	}
	if rc.OnError != "" && rc.OnError != "open" && rc.OnError != "closed" {
		return nil, fmt.Errorf("redis: on_error must be open or closed, not %q", rc.OnError)
	}
	if rc.LedgerFlush < 0 || rc.LedgerRetention < 0 {
		return nil, errors.New("redis: ledger_flush and ledger_retention must not be negative")
	}
	timeout := time.Duration(rc.Timeout)
	if timeout <= 0 {
		timeout = 250 * time.Millisecond
	}
	lease := time.Duration(rc.Lease)
	if lease < 0 || lease > 0 && lease < 3*timeout {
		// Renewals every third of the lease, each allowed the timeout,
		// must land before it runs out.
		return nil, fmt.Errorf("redis: lease %v must be at least three times the timeout (%v)", lease, timeout)
	}
	var opts *redis.Options
	if strings.Contains(rc.Address, "://") {
		var err error
		if opts, err = redis.ParseURL(rc.Address); err != nil {
			return nil, fmt.Errorf("redis: %w", err)
		}
	} else {
		opts = &redis.Options{Addr: rc.Address}
	}
	if rc.Password != "" {
		opts.Password = caddy.NewReplacer().ReplaceAll(rc.Password, "")
	}
	if rc.DB != 0 {
		opts.DB = rc.DB
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = timeout, timeout, timeout
	// A failed operation fails now: the request must not wait. The pool
	// dialled 5 times, 100ms apart, before giving up on a refused
	// connection (~0.4s per request with Redis down).
	opts.MaxRetries, opts.DialerRetries = -1, 1
	routeRedisLogs()
	client := redis.NewClient(opts)
	prefix := rc.Prefix
	if prefix == "" {
		prefix = "louter:"
	}
	mode := "admitted uncounted (on_error open)"
	if rc.failClosed() {
		mode = "refused (on_error closed)"
	}
	server := zap.String("redis", opts.Addr)
	breaker := &limits.Breaker{
		OnDown: func(err error) {
			logger.Error("redis is down: requests with limits are "+mode+" until it answers again", server, zap.Error(err),
				zap.Duration("retry_after", limits.DefaultMinCooldown), zap.Duration("max_retry_after", limits.DefaultMaxCooldown))
		},
		OnUp: func(down time.Duration) {
			logger.Info("redis is back: limits are counted again", server, zap.Duration("down_for", down))
		},
	}
	store := &limits.BreakerStore{Store: &limits.RedisStore{Client: client, Prefix: prefix}, Breaker: breaker}
	// The ledger has a breaker of its own: its writes run in the
	// background, and its failures must not refuse requests.
	ledger := limits.NewRedisLedger(client, prefix, &limits.Breaker{}, time.Duration(rc.LedgerFlush), time.Duration(rc.LedgerRetention), timeout)
	return &redisConn{
		limiter: &limits.Limiter{Store: store, Lease: lease},
		ledger:  ledger,
		client:  client,
		prefix:  prefix,
		server:  fmt.Sprintf("%s/%d", opts.Addr, opts.DB),
		close: func() {
			ledger.Close()
			_ = client.Close()
		},
	}, nil
}

// failClosed reports whether a request is refused when the store fails.
func (rc *RedisCounters) failClosed() bool { return rc != nil && rc.OnError == "closed" }
