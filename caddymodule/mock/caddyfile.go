package mock

import (
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("louter_mock", parseCaddyfile)
	// The mock is a responder, like respond or file_server: it ends the
	// chain. Ordering it just before file_server (the last catch-all
	// responder of the standard order) lets it be the only handler of a
	// site block without an `order` line, keeps it inside every middleware
	// (encode, auth, louter itself, which goes before reverse_proxy) when
	// they share a block, and still lets `respond`, `reverse_proxy` or
	// `handle` routes with narrower matchers answer first.
	httpcaddyfile.RegisterDirectiveOrder("louter_mock", httpcaddyfile.Before, "file_server")
}

// parseCaddyfile sets up the handler from Caddyfile tokens.
func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(Mock)
	if err := m.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return m, nil
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	louter_mock [<name>] {
//	    name             <name>
//	    default_scenario <scenario>
//	    chunk_delay      <duration>
//	    chunk_size       <bytes>
//	    fixtures_dir     <dir>
//	    model_prefix     <prefix>
//	    dialect          <tool-style> [<reasoning-style>] | harmony
//	    replay           <recording.jsonl>
//	    replay_timing
//	}
func (m *Mock) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume the directive name
	if d.NextArg() {
		m.Name = d.Val()
		if d.NextArg() {
			return d.ArgErr()
		}
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "name":
			if !d.AllArgs(&m.Name) {
				return d.ArgErr()
			}
		case "default_scenario":
			if !d.AllArgs(&m.DefaultScenario) {
				return d.ArgErr()
			}
			if !knownScenario(m.DefaultScenario) {
				return d.Errf("unknown scenario %q", m.DefaultScenario)
			}
		case "chunk_delay":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil {
				return d.Errf("chunk_delay %q: %v", v, err)
			}
			if dur < 0 {
				return d.Errf("chunk_delay must not be negative, got %s", v)
			}
			m.ChunkDelay = caddy.Duration(dur)
		case "chunk_size":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return d.Errf("chunk_size must be a number of bytes >= 0, got %q", v)
			}
			m.ChunkSize = n
		case "fixtures_dir":
			if !d.AllArgs(&m.FixturesDir) {
				return d.ArgErr()
			}
		case "model_prefix":
			if !d.AllArgs(&m.ModelPrefix) {
				return d.ArgErr()
			}
		case "dialect":
			args := d.RemainingArgs()
			if len(args) == 0 || len(args) > 2 {
				return d.ArgErr()
			}
			m.Dialect = strings.Join(args, " ")
			if _, err := parseDialect(m.Dialect); err != nil {
				return d.Errf("dialect: %v", err)
			}
		case "replay":
			if !d.AllArgs(&m.Replay) {
				return d.ArgErr()
			}
		case "replay_timing":
			if d.NextArg() {
				return d.ArgErr()
			}
			m.ReplayTiming = true
		case "bedrock_sigv4":
			// bedrock_sigv4 <access key id> <secret> [<session token>] [region <r>]
			args := d.RemainingArgs()
			if len(args) < 2 {
				return d.ArgErr()
			}
			if m.Bedrock == nil {
				m.Bedrock = new(BedrockAuth)
			}
			m.Bedrock.AccessKeyID, m.Bedrock.SecretAccessKey = args[0], args[1]
			args = args[2:]
			if len(args) == 1 || len(args) == 3 {
				m.Bedrock.SessionToken, args = args[0], args[1:]
			}
			if len(args) == 2 && args[0] == "region" {
				m.Bedrock.Region, args = args[1], nil
			}
			if len(args) != 0 {
				return d.ArgErr()
			}
		case "bedrock_api_key":
			if m.Bedrock == nil {
				m.Bedrock = new(BedrockAuth)
			}
			if !d.AllArgs(&m.Bedrock.APIKey) {
				return d.ArgErr()
			}
		default:
			return d.Errf("unrecognized louter_mock subdirective %q", d.Val())
		}
	}
	return nil
}
