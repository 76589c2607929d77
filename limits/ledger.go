package limits

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// This file is the usage ledger: what each client used of each model
// route on each backend, per UTC day. A LedgerStore keeps it: Ledger in
// the process's memory (one instance, bounded), RedisLedger in Redis
// (shared by every instance, kept across restarts; redis_ledger.go).

// LedgerKey is one line of the ledger. Its parts must come from bounded
// sets: louter keys it by configured client, route and backend names,
// never by a name a client sends.
type LedgerKey struct {
	// Day is the UTC day the request ended, as 2006-01-02.
	Day     string `json:"day"`
	Client  string `json:"client"`
	Model   string `json:"model"`
	Backend string `json:"backend"`
}

// DayFormat is the layout of LedgerKey.Day and of a LedgerFilter's days.
const DayFormat = "2006-01-02"

// Day returns the ledger day of t.
func Day(t time.Time) string {
	t = t.UTC()
	if c := dayCache.Load(); c != nil && c.start.Unix() <= t.Unix() && t.Unix() < c.start.Unix()+86400 {
		return c.day // the day changes once a day, the request path asks it every time
	}
	start := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	c := &cachedDay{start: start, day: t.Format(DayFormat)}
	dayCache.Store(c)
	return c.day
}

type cachedDay struct {
	start time.Time
	day   string
}

var dayCache atomic.Pointer[cachedDay]

// LedgerEntry is one client's use of one model.
type LedgerEntry struct {
	Requests         int64   `json:"requests"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64   `json:"cache_write_tokens,omitempty"`
	CostUSD          float64 `json:"cost_usd"`
	// EstimatedRequests are the requests counted on louter's estimate
	// because the backend reported no usage (Usage.Estimated).
	EstimatedRequests int64 `json:"estimated_requests,omitempty"`
	// CostMicro is CostUSD in micro-dollars, what louter counts in.
	CostMicro int64 `json:"cost_micro_usd"`
}

// add adds one request's use.
func (e *LedgerEntry) add(u Usage, costMicro int64) {
	e.Requests++
	if u.Estimated {
		e.EstimatedRequests++
	}
	e.InputTokens += u.Input
	e.OutputTokens += u.Output
	e.CacheReadTokens += u.CacheRead
	e.CacheWriteTokens += u.CacheWrite
	e.CostMicro += costMicro
}

// merge adds o to e.
func (e *LedgerEntry) merge(o *LedgerEntry) {
	e.Requests += o.Requests
	e.EstimatedRequests += o.EstimatedRequests
	e.InputTokens += o.InputTokens
	e.OutputTokens += o.OutputTokens
	e.CacheReadTokens += o.CacheReadTokens
	e.CacheWriteTokens += o.CacheWriteTokens
	e.CostMicro += o.CostMicro
	e.CostUSD = float64(e.CostMicro) / 1e6
}

// LedgerRow is one line of a ledger query.
type LedgerRow struct {
	LedgerKey
	LedgerEntry
}

// LedgerFilter selects the rows of a query; an empty field selects all.
type LedgerFilter struct {
	Client, Model, Backend string
	// From and To are days (DayFormat), both included.
	From, To string
}

func (f LedgerFilter) match(k LedgerKey) bool {
	return (f.Client == "" || f.Client == k.Client) && (f.Model == "" || f.Model == k.Model) &&
		(f.Backend == "" || f.Backend == k.Backend) && (f.From == "" || k.Day >= f.From) && (f.To == "" || k.Day <= f.To)
}

// LedgerStore keeps the ledger.
type LedgerStore interface {
	// Record adds one request. It never blocks on a network: a shared
	// store queues it.
	Record(k LedgerKey, u Usage, costMicro int64)
	// Query returns the rows f selects, sorted by day, client, model and
	// backend.
	Query(ctx context.Context, f LedgerFilter) ([]LedgerRow, error)
}

// LedgerClient is one client's use, by model, with its total cost.
type LedgerClient struct {
	CostUSD float64                 `json:"cost_usd"`
	Models  map[string]*LedgerEntry `json:"models"`
}

// LedgerReport is the ledger's content, as the admin endpoint serves it.
type LedgerReport struct {
	// Since is when the ledger began counting.
	Since time.Time `json:"since"`
	// Source is where the ledger is kept: "memory" or "redis", or
	// "memory+redis" when some handlers keep it in memory and others in
	// Redis (the rows are then both's, added up).
	Source string `json:"source"`
	// Sources are the ledgers the rows were read from, each once: the
	// process's memory ledger, and each Redis server and prefix (handlers
	// configured with the same one share its rows: they are read once).
	Sources []LedgerSource `json:"sources"`
	// The filter the rows were selected with.
	Filter LedgerReportFilter `json:"filter"`
	// Rows are the selected lines, by day, client, model and backend.
	Rows []LedgerRow `json:"rows"`
	// Totals sums the rows.
	Totals LedgerEntry `json:"totals"`
	// Clients sums the rows by client and model, over days and backends.
	Clients map[string]*LedgerClient `json:"clients"`
	// StoreErrors is how many times the counter store failed (set by the
	// gateway, which knows its store).
	StoreErrors int64 `json:"store_errors"`
	// Pending is how many records wait to be written to a shared store;
	// Lost how many were given up (a full queue, Redis down too long, a
	// shutdown that could not flush).
	Pending int64 `json:"pending_records"`
	Lost    int64 `json:"lost_records"`
	// Error says why the rows could not be read (Redis is down); the
	// answer's status is then 503.
	Error string `json:"error,omitempty"`
}

// LedgerSource is one ledger of a report.
type LedgerSource struct {
	// Source is "memory" or "redis".
	Source string `json:"source"`
	// Server and Prefix are a Redis ledger's: its host:port and database,
	// and the prefix of its keys.
	Server string `json:"server,omitempty"`
	Prefix string `json:"prefix,omitempty"`
	// Since is when this ledger began counting.
	Since time.Time `json:"since"`
	// Totals sums this ledger's selected rows.
	Totals LedgerEntry `json:"totals"`
	// Pending and Lost are a Redis ledger's, as in LedgerReport.
	Pending int64 `json:"pending_records,omitempty"`
	Lost    int64 `json:"lost_records,omitempty"`
	// Error says why this ledger could not be read.
	Error string `json:"error,omitempty"`
}

// Sum sums rows into a LedgerEntry.
func Sum(rows []LedgerRow) LedgerEntry {
	var e LedgerEntry
	for i := range rows {
		e.merge(&rows[i].LedgerEntry)
	}
	return e
}

// MergeRows adds up the rows of several ledgers into one list, sorted as
// Query returns them: the rows of one key
// (day, client, model, backend) in several ledgers are different
// requests, recorded by different handlers, and become one row.
func MergeRows(sets ...[]LedgerRow) []LedgerRow {
	byKey := map[LedgerKey]*LedgerEntry{}
	for _, rows := range sets {
		for i := range rows {
			e := byKey[rows[i].LedgerKey]
			if e == nil {
				e = &LedgerEntry{}
				byKey[rows[i].LedgerKey] = e
			}
			e.merge(&rows[i].LedgerEntry)
		}
	}
	out := make([]LedgerRow, 0, len(byKey))
	for k, e := range byKey {
		out = append(out, LedgerRow{LedgerKey: k, LedgerEntry: *e})
	}
	SortRows(out)
	return out
}

// LedgerReportFilter is a LedgerFilter as JSON.
type LedgerReportFilter struct {
	Client  string `json:"client,omitempty"`
	Model   string `json:"model,omitempty"`
	Backend string `json:"backend,omitempty"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
}

// NewLedgerReport sums rows into a report.
func NewLedgerReport(since time.Time, source string, f LedgerFilter, rows []LedgerRow) LedgerReport {
	rep := LedgerReport{Since: since, Source: source, Rows: rows, Clients: map[string]*LedgerClient{},
		Filter: LedgerReportFilter(f), Sources: []LedgerSource{}}
	if rep.Rows == nil {
		rep.Rows = []LedgerRow{}
	}
	for i := range rows {
		r := &rows[i]
		r.CostUSD = float64(r.CostMicro) / 1e6
		rep.Totals.merge(&r.LedgerEntry)
		c := rep.Clients[r.Client]
		if c == nil {
			c = &LedgerClient{Models: map[string]*LedgerEntry{}}
			rep.Clients[r.Client] = c
		}
		e := c.Models[r.Model]
		if e == nil {
			e = &LedgerEntry{}
			c.Models[r.Model] = e
		}
		e.merge(&r.LedgerEntry)
	}
	for _, c := range rep.Clients {
		var micro int64
		for _, e := range c.Models {
			micro += e.CostMicro
		}
		c.CostUSD = float64(micro) / 1e6
	}
	return rep
}

// Ledger is a LedgerStore in the process's memory, for one instance. It is
// safe for concurrent use. Its entries are bounded: past maxEntries lines,
// a new line is recorded under LedgerOther (see Record), and days older
// than MemoryLedgerDays are dropped.
type Ledger struct {
	mu         sync.Mutex
	since      time.Time
	lines      map[LedgerKey]*LedgerEntry
	clients    map[string]bool
	maxEntries int
	oldest     string // the oldest day kept
}

// DefaultLedgerEntries bounds the lines of a memory ledger: enough for
// hundreds of clients of dozens of routes, at about 250 bytes a line
// (2.5 MB).
const DefaultLedgerEntries = 10_000

// MemoryLedgerDays is how many days a memory ledger keeps.
const MemoryLedgerDays = 90

// LedgerOther is the name a full ledger records a new client, model or
// backend under. The parentheses keep it apart from a client or route
// named "other".
const LedgerOther = "(other)"

// NewLedger returns an empty ledger started at now.
func NewLedger(now time.Time) *Ledger {
	return &Ledger{since: now, lines: make(map[LedgerKey]*LedgerEntry), clients: map[string]bool{}, maxEntries: DefaultLedgerEntries}
}

// Since is when the ledger began counting.
func (l *Ledger) Since() time.Time { return l.since }

// Record implements LedgerStore. Once the ledger holds maxEntries lines, a
// new line is folded: a known client's under the client's LedgerOther
// model and backend, a new client's under LedgerOther for all three, so
// nothing is lost from the totals and the ledger stays under maxEntries
// plus one line per client and day.
func (l *Ledger) Record(k LedgerKey, u Usage, costMicro int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if k.Day < l.oldest {
		return // older than the ledger keeps
	}
	if len(l.lines) >= l.maxEntries {
		l.dropOld(k.Day)
	}
	e := l.lines[k]
	if e == nil && len(l.lines) >= l.maxEntries {
		if !l.clients[k.Client] {
			k.Client = LedgerOther
		}
		k.Model, k.Backend = LedgerOther, LedgerOther
		e = l.lines[k]
	}
	if e == nil {
		e = &LedgerEntry{}
		l.lines[k] = e
		l.clients[k.Client] = true
	}
	e.add(u, costMicro)
}

// dropOld drops the days before MemoryLedgerDays before day.
func (l *Ledger) dropOld(day string) {
	t, err := time.Parse(DayFormat, day)
	if err != nil {
		return
	}
	oldest := Day(t.AddDate(0, 0, -MemoryLedgerDays+1))
	if oldest <= l.oldest {
		return
	}
	l.oldest = oldest
	for k := range l.lines {
		if k.Day < oldest {
			delete(l.lines, k)
		}
	}
}

// Query implements LedgerStore.
func (l *Ledger) Query(_ context.Context, f LedgerFilter) ([]LedgerRow, error) {
	l.mu.Lock()
	rows := make([]LedgerRow, 0, len(l.lines))
	for k, e := range l.lines {
		if f.match(k) {
			rows = append(rows, LedgerRow{k, *e})
		}
	}
	l.mu.Unlock()
	SortRows(rows)
	return rows, nil
}

// SortRows sorts rows by day, client, model and backend.
func SortRows(rows []LedgerRow) {
	slices.SortFunc(rows, func(a, b LedgerRow) int {
		return cmp.Or(cmp.Compare(a.Day, b.Day), cmp.Compare(a.Client, b.Client), cmp.Compare(a.Model, b.Model), cmp.Compare(a.Backend, b.Backend))
	})
}

// Report returns the whole ledger as a report (source "memory").
func (l *Ledger) Report() LedgerReport {
	rows, _ := l.Query(context.Background(), LedgerFilter{})
	return NewLedgerReport(l.since, "memory", LedgerFilter{}, rows)
}

// Interface guard
var _ LedgerStore = (*Ledger)(nil)
