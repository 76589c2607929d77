package limits_test

import (
	"context"
	"fmt"
	"time"

	"github.com/louter/louter/limits"
)

// A ledger records each request under its day, client, model route and
// backend; a query filters and sorts the lines, and a report sums them.
func ExampleLedger_Query() {
	l := limits.NewLedger(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	day := "2026-11-27"
	l.Record(limits.LedgerKey{Day: day, Client: "alice", Model: "gpt-*", Backend: "openai"}, limits.Usage{Input: 1200, Output: 300}, 4_500)
	l.Record(limits.LedgerKey{Day: day, Client: "alice", Model: "gpt-*", Backend: "azure"}, limits.Usage{Input: 800, Output: 100, Estimated: true}, 2_000)
	l.Record(limits.LedgerKey{Day: day, Client: "bob", Model: "claude-*", Backend: "anthropic"}, limits.Usage{Input: 50, Output: 20}, 450)

	f := limits.LedgerFilter{Client: "alice", From: "2026-11-01"}
	rows, _ := l.Query(context.Background(), f)
	for _, r := range rows {
		fmt.Printf("%s %s %s %s: %d requests, $%.4f\n", r.Day, r.Client, r.Model, r.Backend, r.Requests, float64(r.CostMicro)/1e6)
	}
	rep := limits.NewLedgerReport(l.Since(), "memory", f, rows)
	fmt.Printf("total: %d requests (%d estimated), $%.4f\n", rep.Totals.Requests, rep.Totals.EstimatedRequests, rep.Totals.CostUSD)
	// Output:
	// 2026-11-27 alice gpt-* azure: 1 requests, $0.0020
	// 2026-11-27 alice gpt-* openai: 1 requests, $0.0045
	// total: 2 requests (1 estimated), $0.0065
}
