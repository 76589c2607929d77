package caddymodule

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/louter/louter/keys"
)

// This file holds the keys created at run time through the admin API
// (keys_admin.go): each louter handler with managed_keys on watches the
// key table in its store — Redis when redis is set, else Caddy's storage —
// and checks a request's key against it after the config's clients. A
// change made through the admin API of any instance is in force on this
// one when the watcher sees it: at once over Redis pub/sub, else within a
// poll.

// ManagedKeys turns on the keys created at run time through the admin
// API.
type ManagedKeys struct {
	// How often the key table's version is checked, besides the change
	// notices Redis publishes (which may be missed while the connection
	// is down); with Caddy's storage, how soon another instance's change
	// is in force. Default: 5s.
	Poll caddy.Duration `json:"poll,omitempty"`
}

// managedSpec is what the keys API keeps with a key: a ClientKey without
// its name and key source.
type managedSpec struct {
	Models []string `json:"models,omitempty"`
	Limits
	ModelLimits []ModelLimit `json:"model_limits,omitempty"`
}

// storageKeysKey is where the key table is kept in Caddy's storage.
const storageKeysKey = "louter/keys.json"

// managedTable is one version of the table, provisioned.
type managedTable struct {
	version int64
	byHash  map[[sha256.Size]byte]*clientEntry
	entries map[string]keys.Entry
	specs   map[string]managedSpec
}

// managedKeys is a handler's view of the key table.
type managedKeys struct {
	store   keys.Store
	watcher *keys.Watcher
	table   atomic.Pointer[managedTable]
	// configClients are the config's clients, by name: the API lists
	// them but may not create, change or revoke them, and a stored key of
	// such a name is ignored.
	configClients map[string]*ClientKey
	logger        *zap.Logger
	cancel        context.CancelFunc
	down          atomic.Bool // the last load failed (logged once)
}

// managedTimeout bounds one load of the table.
const managedTimeout = 2 * time.Second

// provisionManaged starts watching the key table. A store that cannot be
// read now does not fail the config: the table is empty until the
// watcher reads it (the failure is logged).
func (a *access) provisionManaged(ctx caddy.Context, l *Louter) {
	m := &managedKeys{configClients: map[string]*ClientKey{}, logger: l.logger}
	for _, c := range l.Clients {
		if c != nil {
			m.configClients[c.Name] = c
		}
	}
	if a.redis != nil {
		m.store = &keys.RedisStore{Client: a.redis.client, Prefix: a.redis.prefix}
	} else {
		m.store = &keys.StorageStore{Storage: ctx.Storage(), Key: storageKeysKey}
	}
	m.table.Store(&managedTable{byHash: map[[sha256.Size]byte]*clientEntry{}})
	m.watcher = &keys.Watcher{Store: m.store, Poll: time.Duration(l.ManagedKeys.Poll), OnChange: m.apply, OnError: m.failed}
	wctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	m.watcher.Start(wctx, managedTimeout)
	a.managed = m
	a.release = append(a.release, cancel, liveManaged.add(m))
}

// apply provisions a new version of the table. An entry whose spec no
// longer provisions (written by hand, or by a newer louter) is left out
// and logged.
func (m *managedKeys) apply(t keys.Table) {
	if m.down.Swap(false) {
		m.logger.Info("the managed key table is readable again")
	}
	mt := &managedTable{version: t.Version, byHash: make(map[[sha256.Size]byte]*clientEntry, len(t.Entries)),
		entries: t.Entries, specs: make(map[string]managedSpec, len(t.Entries))}
	for name, e := range t.Entries {
		if m.configClients[name] != nil {
			m.logger.Warn("a managed key has the name of a client of the config, which wins; the managed key is ignored", zap.String("client", name))
			continue
		}
		var spec managedSpec
		var h []byte
		err := json.Unmarshal(e.Spec, &spec)
		if err == nil {
			h, err = hex.DecodeString(e.SHA256)
			if err == nil && len(h) != sha256.Size {
				err = fmt.Errorf("a SHA-256 of %d bytes", len(h))
			}
		}
		ce := &clientEntry{name: name, hash: h, models: spec.Models, managed: true}
		if err == nil {
			err = ce.setLimits(spec.Limits, spec.ModelLimits)
		}
		if err != nil {
			m.logger.Error("a managed key's entry is invalid and is ignored", zap.String("client", name), zap.Error(err))
			continue
		}
		mt.byHash[[sha256.Size]byte(h)] = ce
		mt.specs[name] = spec
	}
	m.table.Store(mt)
}

func (m *managedKeys) failed(err error) {
	if !m.down.Swap(true) {
		m.logger.Error("the managed key table cannot be read; the last table read stays in force until it can", zap.Error(err))
	}
}

// find returns the managed client whose key hashes to sum. The map finds
// the candidate; the hashes are then compared in constant time, so no
// compare of a key's hash leaks timing.
func (m *managedKeys) find(sum [sha256.Size]byte) *clientEntry {
	if m == nil {
		return nil
	}
	c := m.table.Load().byHash[sum]
	if c == nil || subtle.ConstantTimeCompare(c.hash, sum[:]) != 1 {
		return nil
	}
	return c
}

// liveManaged are the managed key tables of the loaded handlers, the
// latest last: the admin API writes through the latest's store and
// brings every one in this process up to date before it answers.
var liveManaged registry[*managedKeys]
