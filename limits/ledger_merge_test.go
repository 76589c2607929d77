package limits

import "testing"

// TestMergeRows: the rows of one key in two ledgers add up into one row,
// and the merged list is in Query's order.
func TestMergeRows(t *testing.T) {
	row := func(day, client string, requests, micro int64) LedgerRow {
		return LedgerRow{LedgerKey{Day: day, Client: client, Model: "m", Backend: "b"}, LedgerEntry{Requests: requests, CostMicro: micro}}
	}
	memory := []LedgerRow{row("2026-01-02", "alice", 1, 10), row("2026-01-02", "bob", 2, 20)}
	redis := []LedgerRow{row("2026-01-01", "bob", 4, 40), row("2026-01-02", "alice", 8, 80)}
	got := MergeRows(memory, redis)
	want := []LedgerRow{row("2026-01-01", "bob", 4, 40), row("2026-01-02", "alice", 9, 90), row("2026-01-02", "bob", 2, 20)}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].LedgerKey != want[i].LedgerKey || got[i].Requests != want[i].Requests || got[i].CostMicro != want[i].CostMicro || got[i].CostUSD != float64(want[i].CostMicro)/1e6 {
			t.Errorf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := Sum(got); s.Requests != 15 || s.CostMicro != 150 {
		t.Errorf("sum %+v", s)
	}
}
