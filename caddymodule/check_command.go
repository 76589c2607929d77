package caddymodule

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "louter",
		Usage: "check --config <path> [--adapter <name>] | replay <file.jsonl> [--id <id>] [--verbose]",
		Short: "Commands of the louter LLM gateway",
		Long: `
louter's own commands.

check loads a configuration as "caddy validate" does (adapting a Caddyfile),
reports each error "caddy validate" would (a client with no key, an unset
key_env, ...), and looks for what validation lets through in every louter
handler: model
routes that reach no backend, routes that can never match because an
earlier pattern matches every model they do, api_key placeholders naming
environment variables that are not set, dialect settings that do not fit the
backend's protocol. It prints one line per problem and exits with status 1
if there is any.

replay re-runs a recording made with the record setting through this
build's translators, with no network, and reports the exchanges whose
backend request or client response would now differ (exit status 1).
`,
		CobraFunc: func(cmd *cobra.Command) {
			check := &cobra.Command{
				Use:   "check --config <path> [--adapter <name>]",
				Short: "Checks louter's routes, backends and keys in a configuration",
				Args:  cobra.NoArgs,
				RunE:  caddycmd.WrapCommandFuncForCobra(cmdCheck),
			}
			check.Flags().StringP("config", "c", "", "Configuration file (required)")
			check.Flags().StringP("adapter", "a", "", "Name of config adapter to apply")
			cmd.AddCommand(check)
			cmd.AddCommand(replayCommand()) // record_command.go
		},
	})
}

// checkOutput is where cmdCheck writes (a variable for tests).
var checkOutput io.Writer = os.Stdout

// errProblems makes `caddy louter check` exit with status 1.
var errProblems = errors.New("louter check found problems")

// cmdCheck implements `caddy louter check`.
func cmdCheck(fl caddycmd.Flags) (int, error) {
	file := fl.String("config")
	if file == "" {
		return caddy.ExitCodeFailedStartup, errors.New("--config is required")
	}
	cfg, _, _, err := caddycmd.LoadConfig(file, fl.String("adapter"))
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	problems, err := CheckConfig(cfg)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	for _, p := range problems {
		fmt.Fprintln(checkOutput, p)
	}
	if len(problems) > 0 {
		return 1, fmt.Errorf("%w: %d", errProblems, len(problems))
	}
	fmt.Fprintln(checkOutput, "louter check: no problems found in", file)
	return 0, nil
}
