package caddymodule

import (
	"errors"
	"fmt"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/louter/louter/record"
)

// replayCommand is `caddy louter replay`, added to the louter command in
// check_command.go.
func replayCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "replay <file.jsonl> [--id <id>] [--verbose]",
		Short: "Replays a recording through the current translators and reports what changed",
		Long: `
replay reads a recording made with louter's record setting and runs each
exchange through this build's translators, with no network: the recorded
client request is translated for the backend again, and the recorded backend
response (its stream events in order, or its body) is translated for the
client again. It compares the results with what was recorded — the backend
request, the fields dropped, the client's status and body or each of its
stream events — as JSON, ignoring ` + record.VolatileFields + `,
and prints each exchange that differs with its first differences and their
JSON paths. It exits with status 1 if any exchange differs.
`,
		Args: cobra.ExactArgs(1),
		RunE: caddycmd.WrapCommandFuncForCobra(cmdReplay),
	}
	c.Flags().String("id", "", "Replay only the exchange with this id")
	c.Flags().BoolP("verbose", "v", false, "Print every exchange and every difference")
	return c
}

// errDiffer makes `caddy louter replay` exit with status 1.
var errDiffer = errors.New("louter replay found differences")

// cmdReplay implements `caddy louter replay`.
func cmdReplay(fl caddycmd.Flags) (int, error) {
	xs, err := record.ReadFile(fl.Arg(0))
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	id := fl.String("id")
	s := record.ReplayReport(checkOutput, xs, record.ReportOptions{ID: id, Verbose: fl.Bool("verbose"), Options: record.Options{Framing: tokenFramingOf}})
	if id != "" && s.Replayed+s.Skipped == 0 {
		return caddy.ExitCodeFailedStartup, fmt.Errorf("no exchange with id %q", id)
	}
	if s.Differ > 0 {
		return 1, fmt.Errorf("%w: %d of %d exchanges", errDiffer, s.Differ, s.Replayed)
	}
	return 0, nil
}
