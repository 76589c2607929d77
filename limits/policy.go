package limits

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rate is at most Limit units per Window. A zero Limit means no limit.
type Rate struct {
	Limit  int64
	Window time.Duration
}

// On reports whether the rate limits anything.
func (r Rate) On() bool { return r.Limit > 0 && r.Window > 0 }

// String formats the rate as ParseRate reads it.
func (r Rate) String() string {
	return strconv.FormatInt(r.Limit, 10) + "/" + formatWindow(r.Window)
}

// Policy is what one scope (a client, a route) may use.
type Policy struct {
	// Requests per window.
	Requests Rate
	// Input plus output tokens per window.
	Tokens Rate
	// Requests in progress at once; 0 means no limit.
	Concurrent int64
	// Spend per window, in micro-dollars (millionths of a USD).
	Budget Rate
}

// On reports whether the policy limits anything.
func (p Policy) On() bool {
	return p.Requests.On() || p.Tokens.On() || p.Concurrent > 0 || p.Budget.On()
}

// ParseRate reads "N/WINDOW", such as "100/1m" or "2000000/1h": a
// positive count and a window in Go's duration syntax, which may also be
// written in days ("30d"); a window of "1" unit may leave out the 1 ("100/m").
func ParseRate(s string) (Rate, error) {
	n, w, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Rate{}, fmt.Errorf("rate %q: want N/WINDOW, e.g. 100/1m", s)
	}
	limit, err := strconv.ParseInt(strings.ReplaceAll(n, "_", ""), 10, 64)
	if err != nil || limit <= 0 {
		return Rate{}, fmt.Errorf("rate %q: the count must be a positive integer", s)
	}
	window, err := parseWindow(w)
	if err != nil {
		return Rate{}, fmt.Errorf("rate %q: %w", s, err)
	}
	return Rate{Limit: limit, Window: window}, nil
}

// ParseBudget reads "AMOUNT/WINDOW" in US dollars, such as "50usd/30d",
// "$50/30d" or "12.5/7d", into a Rate in micro-dollars.
func ParseBudget(s string) (Rate, error) {
	a, w, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Rate{}, fmt.Errorf("budget %q: want AMOUNT/WINDOW, e.g. 50usd/30d", s)
	}
	a = strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(a), "$"), "usd")
	usd, err := strconv.ParseFloat(a, 64)
	if err != nil || usd <= 0 || usd > 1e9 || math.IsNaN(usd) {
		return Rate{}, fmt.Errorf("budget %q: the amount must be a positive number of US dollars", s)
	}
	limit := int64(math.Round(usd * 1e6))
	if limit < 1 {
		// Rounded to nothing, the budget would be off, silently.
		return Rate{}, fmt.Errorf("budget %q: the amount is below a millionth of a US dollar, what louter counts in", s)
	}
	window, err := parseWindow(w)
	if err != nil {
		return Rate{}, fmt.Errorf("budget %q: %w", s, err)
	}
	return Rate{Limit: limit, Window: window}, nil
}

// FormatUSD writes an amount of micro-dollars legibly: whole cents as
// "$50.00", anything finer with the digits it needs ("$0.0005",
// "$12.345678"), so a small budget does not read as "$0.00".
func FormatUSD(micro int64) string {
	sign := ""
	if micro < 0 {
		sign, micro = "-", -micro
	}
	whole, frac := micro/1e6, micro%1e6
	if frac%1e4 == 0 {
		return fmt.Sprintf("%s$%d.%02d", sign, whole, frac/1e4)
	}
	return sign + "$" + strconv.FormatInt(whole, 10) + "." + strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
}

func parseWindow(w string) (time.Duration, error) {
	w = strings.TrimSpace(w)
	if w != "" && (w[0] < '0' || w[0] > '9') {
		w = "1" + w
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(w, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 3660 {
			return 0, fmt.Errorf("invalid window %q", w)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(w); err != nil {
			return 0, fmt.Errorf("invalid window %q", w)
		}
	}
	if d < time.Second {
		return 0, fmt.Errorf("window %q is shorter than a second", w)
	}
	return d, nil
}

func formatWindow(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}

// Usage is what one request used, in tokens. Input includes the cached
// tokens (read and written), as translate.Usage counts them.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int64
	// Estimated says the counts are louter's estimate: the backend
	// reported none (a stream cut before its end, a backend that does not
	// report usage).
	Estimated bool
}

// Tokens is the input plus output tokens, what token limits count.
func (u Usage) Tokens() int64 { return u.Input + u.Output }

// Price is what a model costs, in US dollars per million tokens — which is
// also micro-dollars per token.
type Price struct {
	Input, Output, CacheRead, CacheWrite float64
}

// Cost returns what u costs at p, in micro-dollars. Cached input is billed
// at the cache prices when they are set, else at the input price.
func (p Price) Cost(u Usage) int64 {
	cr, cw := p.CacheRead, p.CacheWrite
	if cr == 0 {
		cr = p.Input
	}
	if cw == 0 {
		cw = p.Input
	}
	uncached := max(u.Input-u.CacheRead-u.CacheWrite, 0)
	c := float64(uncached)*p.Input + float64(u.Output)*p.Output + float64(u.CacheRead)*cr + float64(u.CacheWrite)*cw
	return int64(math.Round(c))
}
