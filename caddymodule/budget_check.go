package caddymodule

import (
	"fmt"
	"strings"

	"github.com/louter/louter/limits"
)

// A budget counts what requests cost, and a request costs what the first
// price line matching its model says: with no price line for the models a
// budget covers, every request costs $0 and the budget never triggers,
// silently. unpricedBudgets finds those budgets, for a warning when the
// handler is provisioned and a line of `caddy louter check`.

// unpricedBudgets returns one line per client or route budget that no
// price line can ever charge: none is configured, or none matches a model
// of the routes the budget covers (the route's pattern, which the client's
// model matches, or a rename of the route, its fallbacks or conditions).
// A budget that covers no route at all is left alone: it has nothing to
// count.
func unpricedBudgets(clients []*ClientKey, routes []ModelRoute, prices []ModelPrice) []string {
	var lines []string
	check := func(who, budget string, covered []ModelRoute) {
		if len(covered) == 0 {
			return
		}
		if _, err := limits.ParseBudget(budget); err != nil {
			return // refused at load already; one error, not a second line
		}
		if len(prices) == 0 {
			lines = append(lines, fmt.Sprintf("%s: budget %s never triggers: no price line is configured, so every request costs $0", who, budget))
			return
		}
		for i := range covered {
			if routePriced(&covered[i], prices) {
				return
			}
		}
		pats := make([]string, len(covered))
		for i, m := range covered {
			pats[i] = m.Match
		}
		lines = append(lines, fmt.Sprintf("%s: budget %s never triggers: no price line matches the models of its routes (%s), so every request costs $0", who, budget, strings.Join(pats, ", ")))
	}
	for _, c := range clients {
		if c == nil || c.Budget == "" {
			continue
		}
		var covered []ModelRoute
		for _, m := range routes {
			if clientReaches(c.Models, m.Match) {
				covered = append(covered, m)
			}
		}
		check(fmt.Sprintf("client %q", c.Name), c.Budget, covered)
	}
	for _, m := range routes {
		if m.Limits != nil && m.Limits.Budget != "" {
			check(fmt.Sprintf("model route %q", m.Match), m.Limits.Budget, []ModelRoute{m})
		}
	}
	return lines
}

// clientReaches reports whether a client whose models are allowed (empty:
// every model) may use some model of the route pattern.
func clientReaches(allowed []string, route string) bool {
	if len(allowed) == 0 {
		return true
	}
	for _, a := range allowed {
		if globsOverlap(a, route) {
			return true
		}
	}
	return false
}

// routePriced reports whether a price line with a non-zero price may match
// a model a request of route m is priced by: the backend's model (a
// rename) or else the client's, which the route's pattern matches.
func routePriced(m *ModelRoute, prices []ModelPrice) bool {
	names := []string{m.Match, m.Rename}
	for _, fb := range m.Fallbacks {
		names = append(names, fb.Rename)
	}
	for _, c := range m.When {
		names = append(names, c.Rename)
	}
	for _, p := range prices {
		if p.Input == 0 && p.Output == 0 && p.CacheRead == 0 && p.CacheWrite == 0 {
			continue // charges nothing
		}
		for _, n := range names {
			if n != "" && globsOverlap(p.Match, n) {
				return true
			}
		}
	}
	return false
}

// globsOverlap reports whether some model name matches both patterns
// ('*' matches any run of characters, as in globMatch). A '*' of either
// may stand for any text of the other, a '*' included; other bytes must
// be equal. failed memoises a pair of positions found not to lead to a
// common name, so the walk is quadratic at worst.
func globsOverlap(p, q string) bool {
	failed := make([]bool, (len(p)+1)*(len(q)+1))
	var walk func(i, j int) bool
	walk = func(i, j int) bool {
		if failed[i*(len(q)+1)+j] {
			return false
		}
		var ok bool
		switch {
		case i == len(p) && j == len(q):
			return true
		case i < len(p) && p[i] == '*':
			// The star matches nothing more, or also q's next byte.
			ok = walk(i+1, j) || j < len(q) && walk(i, j+1)
		case j < len(q) && q[j] == '*':
			ok = walk(i, j+1) || i < len(p) && walk(i+1, j)
		case i < len(p) && j < len(q) && p[i] == q[j]:
			ok = walk(i+1, j+1)
		}
		if !ok {
			failed[i*(len(q)+1)+j] = true
		}
		return ok
	}
	return walk(0, 0)
}
