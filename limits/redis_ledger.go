package limits

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisLedger is a LedgerStore in Redis, shared by every instance that
// names the same server and prefix, and kept across restarts. Record does
// not wait for Redis: it queues the record, and a background writer sums
// the queue by line and writes it every FlushInterval in one MULTI/EXEC
// (HINCRBY per counter), so the request path pays a channel send.
//
// What can be lost, and is counted (Lost): records queued while the queue
// is full (QueueSize records waiting: Redis far slower than the traffic);
// lines still unwritten when Redis stays down past maxPendingLines
// distinct lines; and on a crash, what was queued or summed but not yet
// written — at most FlushInterval's worth. Close writes what is left. A
// write whose reply is lost after Redis applied it is retried and counted
// twice; the transaction makes a failed write all or nothing otherwise.
//
// Layout: one hash per day, PREFIX{ledger}:DAY, whose fields are
// "client\x1fmodel\x1fbackend\x1fcounter" (counter: r, i, o, cr, cw, c
// in micro-dollars, e), expiring Retention after the day's last write;
// the set PREFIX{ledger}:days lists the days. The hash tag keeps them on
// one Redis Cluster slot, so one transaction may write them all.
type RedisLedger struct {
	client  redis.UniversalClient
	prefix  string
	breaker *Breaker
	// FlushInterval is how often the queue is written; Retention how long
	// a day stays; timeout bounds one write.
	flushInterval, retention, timeout time.Duration

	queue   chan ledgerRecord
	stop    chan struct{}
	done    chan struct{}
	closeMu sync.RWMutex
	closed  bool

	pending atomic.Int64
	lost    atomic.Int64
	errors  atomic.Int64
}

type ledgerRecord struct {
	k    LedgerKey
	u    Usage
	cost int64
}

// Defaults of a RedisLedger.
const (
	DefaultLedgerFlush     = time.Second
	DefaultLedgerRetention = 400 * 24 * time.Hour
	ledgerQueueSize        = 8192
	maxPendingLines        = 50_000
)

// NewRedisLedger starts a ledger in Redis; Close stops it. breaker may be
// nil; flush and retention 0 take the defaults; timeout bounds a write.
func NewRedisLedger(client redis.UniversalClient, prefix string, breaker *Breaker, flush, retention, timeout time.Duration) *RedisLedger {
	if flush <= 0 {
		flush = DefaultLedgerFlush
	}
	if retention <= 0 {
		retention = DefaultLedgerRetention
	}
	if breaker == nil {
		breaker = &Breaker{}
	}
	l := &RedisLedger{client: client, prefix: prefix, breaker: breaker, flushInterval: flush, retention: retention,
		timeout: max(timeout, time.Second), queue: make(chan ledgerRecord, ledgerQueueSize), stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

// Record implements LedgerStore: it queues the record, or counts it lost
// when the queue is full or the ledger closed.
func (l *RedisLedger) Record(k LedgerKey, u Usage, costMicro int64) {
	l.closeMu.RLock()
	defer l.closeMu.RUnlock()
	if l.closed {
		l.lost.Add(1)
		return
	}
	select {
	case l.queue <- ledgerRecord{k, u, costMicro}:
		l.pending.Add(1)
	default:
		l.lost.Add(1)
	}
}

// Pending is how many records are queued or summed but not yet written.
func (l *RedisLedger) Pending() int64 { return l.pending.Load() }

// Lost is how many records were given up.
func (l *RedisLedger) Lost() int64 { return l.lost.Load() }

// Errors is how many writes and reads failed.
func (l *RedisLedger) Errors() int64 { return l.errors.Load() }

// Close writes what is queued (within the write timeout) and stops.
func (l *RedisLedger) Close() {
	l.closeMu.Lock()
	if l.closed {
		l.closeMu.Unlock()
		return
	}
	l.closed = true
	l.closeMu.Unlock()
	close(l.stop)
	<-l.done
}

// pendingLine is a line's sums not yet written, and how many records
// they hold.
type pendingLine struct {
	e LedgerEntry
	n int64
}

func (l *RedisLedger) run() {
	defer close(l.done)
	lines := map[LedgerKey]*pendingLine{}
	take := func(r ledgerRecord) {
		p := lines[r.k]
		if p == nil {
			if len(lines) >= maxPendingLines {
				l.lost.Add(1)
				l.pending.Add(-1)
				return
			}
			p = &pendingLine{}
			lines[r.k] = p
		}
		p.e.add(r.u, r.cost)
		p.n++
	}
	t := time.NewTicker(l.flushInterval)
	defer t.Stop()
	for {
		select {
		case r := <-l.queue:
			take(r)
		case <-t.C:
			l.flush(lines)
		case <-l.stop:
		drain:
			for {
				select {
				case r := <-l.queue:
					take(r)
				default:
					break drain
				}
			}
			l.flush(lines)
			for _, p := range lines {
				l.lost.Add(p.n)
				l.pending.Add(-p.n)
			}
			return
		}
	}
}

// flush writes lines in one transaction; written lines leave the map, a
// failed write keeps them for the next.
func (l *RedisLedger) flush(lines map[LedgerKey]*pendingLine) {
	if len(lines) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	err := l.breaker.do(ctx, func() error {
		_, err := l.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			days := map[string]bool{}
			for k, pl := range lines {
				key := l.prefix + "{ledger}:" + k.Day
				f := ledgerField(k)
				for _, c := range []struct {
					name string
					v    int64
				}{{"r", pl.e.Requests}, {"i", pl.e.InputTokens}, {"o", pl.e.OutputTokens}, {"cr", pl.e.CacheReadTokens},
					{"cw", pl.e.CacheWriteTokens}, {"c", pl.e.CostMicro}, {"e", pl.e.EstimatedRequests}} {
					if c.v != 0 || c.name == "r" {
						p.HIncrBy(ctx, key, f+c.name, c.v)
					}
				}
				days[k.Day] = true
			}
			for d := range days {
				p.Expire(ctx, l.prefix+"{ledger}:"+d, l.retention)
				p.SAdd(ctx, l.prefix+"{ledger}:days", d)
			}
			return nil
		})
		return err
	})
	if err != nil {
		l.errors.Add(1)
		return
	}
	for k, pl := range lines {
		l.pending.Add(-pl.n)
		delete(lines, k)
	}
}

const ledgerSep = "\x1f"

func ledgerField(k LedgerKey) string {
	return k.Client + ledgerSep + k.Model + ledgerSep + k.Backend + ledgerSep
}

// Query implements LedgerStore: it reads the days of the filter's range
// that Redis holds, one HGETALL each, in one pipeline. What is queued and
// not yet written is not included.
func (l *RedisLedger) Query(ctx context.Context, f LedgerFilter) ([]LedgerRow, error) {
	var rows []LedgerRow
	err := l.breaker.do(ctx, func() error {
		days, err := l.client.SMembers(ctx, l.prefix+"{ledger}:days").Result()
		if err != nil {
			return err
		}
		expired := time.Now().Add(-l.retention).UTC().Format(DayFormat)
		var want []string
		for _, d := range days {
			if d < expired {
				l.client.SRem(ctx, l.prefix+"{ledger}:days", d)
				continue
			}
			if (f.From == "" || d >= f.From) && (f.To == "" || d <= f.To) {
				want = append(want, d)
			}
		}
		cmds := make([]*redis.MapStringStringCmd, len(want))
		if _, err := l.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, d := range want {
				cmds[i] = p.HGetAll(ctx, l.prefix+"{ledger}:"+d)
			}
			return nil
		}); err != nil {
			return err
		}
		for i, d := range want {
			byKey := map[LedgerKey]*LedgerEntry{}
			for field, v := range cmds[i].Val() {
				parts := strings.Split(field, ledgerSep)
				if len(parts) != 4 {
					continue
				}
				k := LedgerKey{Day: d, Client: parts[0], Model: parts[1], Backend: parts[2]}
				if !f.match(k) {
					continue
				}
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					continue
				}
				e := byKey[k]
				if e == nil {
					e = &LedgerEntry{}
					byKey[k] = e
				}
				switch parts[3] {
				case "r":
					e.Requests = n
				case "i":
					e.InputTokens = n
				case "o":
					e.OutputTokens = n
				case "cr":
					e.CacheReadTokens = n
				case "cw":
					e.CacheWriteTokens = n
				case "c":
					e.CostMicro = n
				case "e":
					e.EstimatedRequests = n
				}
			}
			for k, e := range byKey {
				e.CostUSD = float64(e.CostMicro) / 1e6
				rows = append(rows, LedgerRow{k, *e})
			}
		}
		return nil
	})
	if err != nil {
		l.errors.Add(1)
		return nil, errors.Join(errors.New("limits: reading the ledger from redis"), err)
	}
	SortRows(rows)
	return rows, nil
}

// Since returns the first day the ledger holds (midnight UTC), or now
// when it holds none.
func (l *RedisLedger) Since(ctx context.Context) (time.Time, error) {
	since := time.Now()
	err := l.breaker.do(ctx, func() error {
		days, err := l.client.SMembers(ctx, l.prefix+"{ledger}:days").Result()
		for _, d := range days {
			if t, err := time.Parse(DayFormat, d); err == nil && t.Before(since) {
				since = t
			}
		}
		return err
	})
	return since, err
}

// Interface guard
var _ LedgerStore = (*RedisLedger)(nil)
