package keys_test

import (
	"context"
	"fmt"
	"os"

	"github.com/caddyserver/certmagic"

	"github.com/louter/louter/keys"
)

// A key is generated, shown once, and only its SHA-256 is stored; a
// request's key is then checked by hashing it.
func ExampleStorageStore() {
	dir, _ := os.MkdirTemp("", "keys-example")
	defer os.RemoveAll(dir)
	store := &keys.StorageStore{Storage: &certmagic.FileStorage{Path: dir}, Key: "louter/keys.json"}
	ctx := context.Background()

	key, sha, _ := keys.New() // give key to the client; keep sha
	_ = store.Create(ctx, keys.Entry{Name: "alice", SHA256: sha, Spec: []byte(`{"models":["gpt-*"]}`)})

	t, _ := store.Load(ctx)
	e := t.Entries["alice"]
	fmt.Println("version", t.Version, "spec", string(e.Spec))
	fmt.Println("the key matches:", keys.Hash(key) == e.SHA256)
	fmt.Println("another does not:", keys.Hash("lk_guess") != e.SHA256)
	// Output:
	// version 1 spec {"models":["gpt-*"]}
	// the key matches: true
	// another does not: true
}
