// Package edge tests the two-tier deployment docs/edge.md describes: an
// edge Caddy in front of several louter instances, each a Caddy process of
// its own. It holds no code; see edge_test.go.
package edge
