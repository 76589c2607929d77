package limits

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// RedisSource is one handler's Redis ledger, with the server it is on
// (host:port/db), as Gather names it.
type RedisSource struct {
	Server string
	Ledger *RedisLedger
}

// Gather reads every ledger once and merges them into one report: memory
// (nil: none) and each Redis server and prefix. Several handlers, or
// configs during a reload, writing into one server and prefix share its
// rows: it is read once, through the last of them, and what each has
// queued or lost is added up. The error names the ledgers that could not
// be read; the report still has the others' rows. since is the report's
// when no ledger says (the process's start).
func Gather(ctx context.Context, f LedgerFilter, memory *Ledger, redis []RedisSource, since time.Time) (LedgerReport, error) {
	type store struct{ server, prefix string }
	groups := map[store][]*RedisLedger{}
	var order []store
	for _, r := range redis {
		k := store{r.Server, r.Ledger.prefix}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r.Ledger)
	}
	var sources []LedgerSource
	var sets [][]LedgerRow
	var errs []error
	var storeErrors int64
	if memory != nil {
		rows, _ := memory.Query(ctx, f) // never fails
		sets = append(sets, rows)
		sources = append(sources, LedgerSource{Source: "memory", Since: memory.Since(), Totals: Sum(rows)})
	}
	for _, k := range order {
		ledgers := groups[k]
		src := LedgerSource{Source: "redis", Server: k.server, Prefix: k.prefix}
		for _, l := range ledgers {
			src.Pending, src.Lost, storeErrors = src.Pending+l.Pending(), src.Lost+l.Lost(), storeErrors+l.Errors()
		}
		l := ledgers[len(ledgers)-1]
		s, err := l.Since(ctx)
		var rows []LedgerRow
		if err == nil {
			rows, err = l.Query(ctx, f)
		}
		src.Since, src.Totals = s, Sum(rows)
		if err != nil {
			src.Error = err.Error()
			errs = append(errs, fmt.Errorf("redis %s prefix %q: %w", k.server, k.prefix, err))
		}
		sets, sources = append(sets, rows), append(sources, src)
	}
	first := time.Time{}
	for _, s := range sources {
		if !s.Since.IsZero() && (first.IsZero() || s.Since.Before(first)) {
			first = s.Since
		}
	}
	if !first.IsZero() {
		since = first
	}
	source := "memory"
	switch {
	case memory != nil && len(order) > 0:
		source = "memory+redis"
	case len(order) > 0:
		source = "redis"
	}
	rep := NewLedgerReport(since, source, f, MergeRows(sets...))
	if sources != nil {
		rep.Sources = sources
	}
	rep.StoreErrors = storeErrors
	for _, s := range sources {
		rep.Pending, rep.Lost = rep.Pending+s.Pending, rep.Lost+s.Lost
	}
	return rep, errors.Join(errs...)
}
