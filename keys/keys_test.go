package keys

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/certmagic"

	"github.com/louter/louter/internal/testredis"
)

// Every store behaves alike: create once, update, delete, versions that
// move on each write, concurrent creates of one name yield one entry.
func TestStores(t *testing.T) {
	srv := testredis.Start(t)
	rc := srv.Client(t)
	stores := map[string]Store{
		"redis":   &RedisStore{Client: rc, Prefix: "ks:"},
		"storage": &StorageStore{Storage: &certmagic.FileStorage{Path: t.TempDir()}, Key: "louter/keys.json"},
	}
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			tbl, err := s.Load(ctx)
			if err != nil || len(tbl.Entries) != 0 || tbl.Version != 0 {
				t.Fatalf("empty store: %+v %v", tbl, err)
			}
			_, sha, _ := New()
			var created atomic.Int32
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := s.Create(ctx, Entry{Name: "alice", SHA256: sha, Spec: []byte(`{"models":["gpt-*"]}`), Created: time.Now()})
					switch {
					case err == nil:
						created.Add(1)
					case !errors.Is(err, ErrExists):
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if created.Load() != 1 {
				t.Fatalf("%d concurrent creates of one name succeeded, want 1", created.Load())
			}
			v1, _ := s.Version(ctx)
			_, sha2, _ := New()
			if err := s.Update(ctx, "alice", func(e *Entry) error { e.SHA256 = sha2; return nil }); err != nil {
				t.Fatal(err)
			}
			v2, _ := s.Version(ctx)
			tbl, _ = s.Load(ctx)
			if v2 <= v1 || tbl.Version != v2 || tbl.Entries["alice"].SHA256 != sha2 || string(tbl.Entries["alice"].Spec) != `{"models":["gpt-*"]}` {
				t.Errorf("after update: versions %d → %d, table %+v", v1, v2, tbl)
			}
			if err := s.Update(ctx, "bob", func(*Entry) error { return nil }); !errors.Is(err, ErrNotFound) {
				t.Errorf("update of a missing entry: %v", err)
			}
			if err := s.Delete(ctx, "alice"); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, "alice"); !errors.Is(err, ErrNotFound) {
				t.Errorf("second delete: %v", err)
			}
			tbl, _ = s.Load(ctx)
			if len(tbl.Entries) != 0 || tbl.Version <= v2 {
				t.Errorf("after delete: %+v", tbl)
			}
		})
	}
}

// A watcher on Redis sees a change another client made at once (pub/sub),
// long before its poll; on storage, within its poll.
func TestWatcherPropagation(t *testing.T) {
	srv := testredis.Start(t)
	rc, writer := srv.Client(t), srv.Client(t)
	dir := t.TempDir()
	for _, tt := range []struct {
		name           string
		watched, other Store
		poll, within   time.Duration
	}{
		{"redis pub/sub", &RedisStore{Client: rc, Prefix: "w:"}, &RedisStore{Client: writer, Prefix: "w:"}, time.Hour, 2 * time.Second},
		{"storage poll", &StorageStore{Storage: &certmagic.FileStorage{Path: dir}, Key: "k.json"}, &StorageStore{Storage: &certmagic.FileStorage{Path: dir}, Key: "k.json"}, 100 * time.Millisecond, 2 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tables := make(chan Table, 10)
			w := &Watcher{Store: tt.watched, Poll: tt.poll, OnChange: func(t Table) { tables <- t }}
			w.Start(ctx, time.Second)
			if first := <-tables; len(first.Entries) != 0 {
				t.Fatalf("first table %+v", first)
			}
			time.Sleep(100 * time.Millisecond) // the subscription is made
			start := time.Now()
			if err := tt.other.Create(ctx, Entry{Name: "x", SHA256: Hash("k")}); err != nil {
				t.Fatal(err)
			}
			select {
			case tbl := <-tables:
				if _, ok := tbl.Entries["x"]; !ok {
					t.Fatalf("table %+v", tbl)
				}
				t.Logf("%s: the change arrived after %v", tt.name, time.Since(start))
			case <-time.After(tt.within):
				t.Fatalf("no change within %v", tt.within)
			}
		})
	}
}

func TestNew(t *testing.T) {
	k, sha, err := New()
	if err != nil || !strings.HasPrefix(k, "lk_") || len(k) != 46 || Hash(k) != sha || len(sha) != 64 {
		t.Errorf("New: %q %q %v", k, sha, err)
	}
	k2, _, _ := New()
	if k2 == k {
		t.Error("two keys alike")
	}
}
