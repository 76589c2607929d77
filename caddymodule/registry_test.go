package caddymodule

import (
	"slices"
	"testing"
)

// TestRegistry: the latest added is last; a remove function takes off
// its own entry only, once; removeIf takes off what matches.
func TestRegistry(t *testing.T) {
	var r registry[*int]
	if r.latest() != nil || len(r.all()) != 0 {
		t.Fatal("the zero registry is not empty")
	}
	a, b, c := new(int), new(int), new(int)
	removeA := r.add(a)
	r.add(b)
	r.add(c)
	if r.latest() != c || !slices.Equal(r.all(), []*int{a, b, c}) {
		t.Fatalf("after three adds: %v, latest %v", r.all(), r.latest())
	}
	removeA()
	removeA()
	if !slices.Equal(r.all(), []*int{b, c}) {
		t.Fatalf("after removing a: %v", r.all())
	}
	r.removeIf(func(x *int) bool { return x == c })
	if r.latest() != b || !slices.Equal(r.all(), []*int{b}) {
		t.Fatalf("after removing c: %v", r.all())
	}
	got := r.all()
	got[0] = nil
	if r.latest() != b {
		t.Error("all's copy is the registry's own list")
	}
}
