package limits

import (
	"sync"
	"time"
)

// Ledger sums what each client used of each model since it was created.
// It is safe for concurrent use.
type Ledger struct {
	mu      sync.Mutex
	since   time.Time
	clients map[string]map[string]*LedgerEntry
}

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
	return &Ledger{since: now, clients: make(map[string]map[string]*LedgerEntry)}
}

// Record adds one request of client to model, which used u and cost
// costMicro micro-dollars.
func (l *Ledger) Record(client, model string, u Usage, costMicro int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	models := l.clients[client]
	if models == nil {
		models = make(map[string]*LedgerEntry)
		l.clients[client] = models
	}
	e := models[model]
	if e == nil {
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
