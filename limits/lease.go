package limits

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// This file makes a concurrency slot in a shared store a lease. A counter
// that a request increments and its end decrements leaks when the process
// holding it dies mid-stream, or when the store stalls as the request
// ends: nobody ever decrements it, and the client is refused for good. A
// lease expires on its own unless the live request keeps renewing it.

// DefaultLease is how long a concurrency slot in a Leaser store stays
// taken when nothing renews it.
const DefaultLease = 30 * time.Second

// releaseRetryDelay is how long a slot whose release failed waits for
// its one retry: long enough for a store's stall to pass, short against
// the lease that frees it anyway when the retry fails too.
const releaseRetryDelay = time.Second

// Leaser is a Store shared by processes whose concurrency slots are
// leases: a slot is a member of a set (Step.Slot), taken with an expiry
// by TakeAll, which first drops the members that expired; Renew extends
// it while its request runs; AddAll with a Delta naming the slot, or
// Release, removes it. A process that dies holding slots loses them
// within a lease.
type Leaser interface {
	Batcher
	// Renew moves the expiry of slot in the set key to lease from now. A
	// slot no longer in the set (released, or expired) stays out, so a
	// renewal that lands after the release cannot take the slot again.
	Renew(ctx context.Context, key, slot string, lease time.Duration) error
	// Release removes slot from the set key; removing it twice is
	// harmless.
	Release(ctx context.Context, key, slot string) error
}

// slotPrefix makes slot ids unique across the processes sharing a store.
var slotPrefix = sync.OnceValue(func() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:]) + ":"
})

var slotSeq atomic.Uint64

// newSlotID names one concurrency slot: the process's random prefix and
// a sequence number, unique without a random read per request.
func newSlotID() string {
	return slotPrefix() + strconv.FormatUint(slotSeq.Add(1), 36)
}

func (l *Limiter) lease() time.Duration {
	if l.Lease > 0 {
		return l.Lease
	}
	return DefaultLease
}

// holdSlot renews r's leased slot every third of the lease until the
// reservation ends or ctx (the request's) is done: a request that is over
// stops renewing even if it is never settled, and its slot expires.
func (r *Reservation) holdSlot(ctx context.Context, s Leaser) {
	r.stop = make(chan struct{})
	go func() {
		t := time.NewTicker(r.lease / 3)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				// A failed renewal is retried at the next tick; two in a
				// row may fail before the lease runs out.
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.lease/3)
				_ = s.Renew(rctx, r.concKey, r.slot, r.lease)
				cancel()
			}
		}
	}()
}

// endSlot stops renewing r's slot; the caller releases it.
func (r *Reservation) endSlot() {
	if r.stop != nil {
		close(r.stop)
	}
}

// finish applies the deltas that end a reservation. When they fail and
// one of them released a leased slot, the release alone is tried once
// more in the background: it is idempotent, unlike the counters' deltas,
// and a slot lost there would be held until its lease runs out.
func (r *Reservation) finish(ctx context.Context, deltas []Delta) error {
	r.endSlot()
	err := r.l.addAll(ctx, deltas)
	if err != nil && r.slot != "" {
		if s, ok := r.l.Store.(Leaser); ok {
			time.AfterFunc(releaseRetryDelay, func() {
				rctx, cancel := context.WithTimeout(context.Background(), releaseRetryDelay)
				defer cancel()
				_ = s.Release(rctx, r.concKey, r.slot)
			})
		}
	}
	return err
}
