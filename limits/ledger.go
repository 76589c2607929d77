package limits

import (
	"sync"
	"time"
)

// Ledger sums what each client used of each model since it was created.
// It is safe for concurrent use. It lives as long as the process, so its
// keys must come from a bounded set (louter keys it by configured route,
// never by the model name a client sends), and its entries are bounded
// anyway: past maxEntries client and model pairs, a new pair is recorded
// under LedgerOther (see Record).
type Ledger struct {
	mu         sync.Mutex
	since      time.Time
	clients    map[string]map[string]*LedgerEntry
	entries    int // client and model pairs
	maxEntries int
}

// DefaultLedgerEntries bounds the client and model pairs of a ledger:
// enough for hundreds of clients of dozens of routes, at about 200 bytes
// an entry (2 MB) and a report of about 1.5 MB.
const DefaultLedgerEntries = 10_000

// LedgerOther is the key a full ledger records a new client or model
// under. The parentheses keep it apart from a client or route named
// "other".
const LedgerOther = "(other)"

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
	costMicro         int64
}

// LedgerClient is one client's use, by model, with its total cost.
type LedgerClient struct {
	CostUSD float64                 `json:"cost_usd"`
	Models  map[string]*LedgerEntry `json:"models"`
}

// LedgerReport is the ledger's content, as the admin endpoint serves it.
type LedgerReport struct {
	Since   time.Time                `json:"since"`
	Clients map[string]*LedgerClient `json:"clients"`
	// StoreErrors is how many times the counter store failed (set by the
	// gateway, which knows its store).
	StoreErrors int64 `json:"store_errors"`
}

// NewLedger returns an empty ledger started at now.
func NewLedger(now time.Time) *Ledger {
	return &Ledger{since: now, clients: make(map[string]map[string]*LedgerEntry), maxEntries: DefaultLedgerEntries}
}

// Record adds one request of client to model, which used u and cost
// costMicro micro-dollars. Once the ledger holds maxEntries pairs, a new
// pair is folded: a known client's new model is recorded as the client's
// LedgerOther, a new client's as LedgerOther's LedgerOther, so nothing is
// lost from the totals and the ledger stays under maxEntries plus one
// entry per client.
func (l *Ledger) Record(client, model string, u Usage, costMicro int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	models := l.clients[client]
	e := models[model]
	if e == nil && l.entries >= l.maxEntries {
		if models == nil {
			client = LedgerOther
			models = l.clients[client]
		}
		model = LedgerOther
		e = models[model]
	}
	if models == nil {
		models = make(map[string]*LedgerEntry)
		l.clients[client] = models
	}
	if e == nil {
		l.entries++
		e = &LedgerEntry{}
		models[model] = e
	}
	e.Requests++
	if u.Estimated {
		e.EstimatedRequests++
	}
	e.InputTokens += u.Input
	e.OutputTokens += u.Output
	e.CacheReadTokens += u.CacheRead
	e.CacheWriteTokens += u.CacheWrite
	e.costMicro += costMicro
}

// Report returns a copy of the ledger's content.
func (l *Ledger) Report() LedgerReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	rep := LedgerReport{Since: l.since, Clients: make(map[string]*LedgerClient, len(l.clients))}
	for name, models := range l.clients {
		c := &LedgerClient{Models: make(map[string]*LedgerEntry, len(models))}
		var total int64
		for m, e := range models {
			cp := *e
			cp.CostUSD = float64(e.costMicro) / 1e6
			c.Models[m] = &cp
			total += e.costMicro
		}
		c.CostUSD = float64(total) / 1e6
		rep.Clients[name] = c
	}
	return rep
}
