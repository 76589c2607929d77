package record

import (
	"fmt"
	"io"
)

// ReportOptions choose what ReplayReport replays and prints.
type ReportOptions struct {
	// ID, when set, replays only the exchange with that id.
	ID string
	// Verbose prints a line for every exchange, not only those that
	// differ or were skipped, and every difference found (up to the
	// per-part cap), not only the first few.
	Verbose bool
	// Replay options.
	Options
}

// firstDiffs is how many differences an exchange's report shows unless
// verbose.
const firstDiffs = 3

// Summary counts a replay's outcomes.
type Summary struct {
	Replayed, Differ, Skipped int
}

// ReplayReport replays the exchanges and writes a report to w: a line per
// exchange that differs (its first differences with their JSON paths, one
// per line) or was skipped, and a summary line.
func ReplayReport(w io.Writer, xs []*Exchange, opt ReportOptions) Summary {
	var s Summary
	for _, x := range xs {
		if opt.ID != "" && x.ID != opt.ID {
			continue
		}
		res := Replay(x, opt.Options)
		name := x.ID + " " + string(x.Client.Protocol)
		if x.Backend != nil {
			name += ">" + string(x.Backend.Protocol)
		}
		switch {
		case res.Skipped != "":
			s.Skipped++
			fmt.Fprintf(w, "%s: skipped: %s\n", name, res.Skipped)
			continue
		case len(res.Diffs) == 0:
			s.Replayed++
			if opt.Verbose {
				fmt.Fprintf(w, "%s: same\n", name)
			}
			continue
		}
		s.Replayed++
		s.Differ++
		fmt.Fprintf(w, "%s: %d differences\n", name, len(res.Diffs))
		for i, d := range res.Diffs {
			if i == firstDiffs && !opt.Verbose {
				fmt.Fprintf(w, "    ... (--verbose shows all)\n")
				break
			}
			fmt.Fprintf(w, "    %s\n", d)
		}
	}
	fmt.Fprintf(w, "replayed %d exchanges: %d differ, %d skipped\n", s.Replayed, s.Differ, s.Skipped)
	return s
}
