package caddymodule

import (
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/louter/louter/limits"
)

// unmarshalCaddyfile parses one client, identity or price line of the
// louter block; the dispenser is on the subdirective's name:
//
//	client <name> {
//	    key_sha256 <hex> | key_file <path> | key_env <VAR>
//	    models <glob>...
//	    requests <N/window>
//	    tokens <N/window>
//	    concurrent <N>
//	    budget <USD/window>
//	    budget_alert <percent>
//	    model_limit <glob> {
//	        requests|tokens|concurrent|budget|budget_alert <value>
//	    }
//	}
//	identity <placeholder>
//	managed_keys {
//	    poll <duration>
//	}
//	alert_webhook <url>
//	price <glob> [input <usd>] [output <usd>] [cache_read <usd>] [cache_write <usd>]
//	redis <address> {
//	    password <password>
//	    db <n>
//	    prefix <prefix>
//	    timeout <duration>
//	    on_error open|closed
//	    lease <duration>
//	    ledger_flush <duration>
//	    ledger_retention <duration>
//	}
func (a *ClientAccess) unmarshalCaddyfile(d *caddyfile.Dispenser) error {
	switch d.Val() {
	case "identity":
		if a.Identity != "" {
			return d.Err("identity already specified")
		}
		if !d.AllArgs(&a.Identity) {
			return d.ArgErr()
		}
	case "price":
		return a.unmarshalPrice(d)
	case "alert_webhook":
		if a.AlertWebhook != "" {
			return d.Err("alert_webhook already specified")
		}
		if !d.AllArgs(&a.AlertWebhook) {
			return d.ArgErr()
		}
	case "managed_keys":
		if a.ManagedKeys != nil {
			return d.Err("managed_keys already specified")
		}
		if d.NextArg() {
			return d.ArgErr()
		}
		a.ManagedKeys = &ManagedKeys{}
		for nesting := d.Nesting(); d.NextBlock(nesting); {
			if d.Val() != "poll" {
				return d.Errf("unrecognized louter managed_keys subdirective '%s'", d.Val())
			}
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("managed_keys poll: invalid duration %q", v)
			}
			a.ManagedKeys.Poll = caddy.Duration(dur)
		}
	case "redis":
		return a.unmarshalRedis(d)
	case "client":
		var c ClientKey
		if !d.NextArg() {
			return d.ArgErr()
		}
		c.Name = d.Val()
		if d.NextArg() {
			return d.ArgErr()
		}
		for nesting := d.Nesting(); d.NextBlock(nesting); {
			switch d.Val() {
			case "key_sha256", "key_file", "key_env":
				kind, v := d.Val(), ""
				if !d.AllArgs(&v) {
					return d.ArgErr()
				}
				if c.KeySHA256 != "" || c.KeyFile != "" || c.KeyEnv != "" {
					return d.Err("the client's key is already specified")
				}
				switch kind {
				case "key_sha256":
					c.KeySHA256 = v
				case "key_file":
					c.KeyFile = v
				default:
					c.KeyEnv = v
				}
			case "models":
				names := d.RemainingArgs()
				if len(names) == 0 {
					return d.ArgErr()
				}
				c.Models = append(c.Models, names...)
			case "requests", "tokens", "concurrent", "budget", "budget_alert":
				if err := c.Limits.unmarshalCaddyfile(d); err != nil {
					return err
				}
			case "model_limit":
				ml := ModelLimit{}
				if !d.AllArgs(&ml.Match) {
					return d.ArgErr()
				}
				for nesting := d.Nesting(); d.NextBlock(nesting); {
					if err := ml.Limits.unmarshalCaddyfile(d); err != nil {
						return err
					}
				}
				c.ModelLimits = append(c.ModelLimits, ml)
			default:
				return d.Errf("unrecognized louter client subdirective '%s'", d.Val())
			}
		}
		a.Clients = append(a.Clients, &c)
	}
	return nil
}

// unmarshalPrice parses "price <glob> input 1.25 output 10 ...".
func (a *ClientAccess) unmarshalPrice(d *caddyfile.Dispenser) error {
	var p ModelPrice
	if !d.NextArg() {
		return d.ArgErr()
	}
	p.Match = d.Val()
	args := d.RemainingArgs()
	if len(args) == 0 || len(args)%2 != 0 {
		return d.Err("price: want <model> followed by pairs such as input 1.25 output 10 (USD per million tokens)")
	}
	for i := 0; i < len(args); i += 2 {
		v, err := strconv.ParseFloat(args[i+1], 64)
		if err != nil || v < 0 {
			return d.Errf("price %s: invalid %s price %q", p.Match, args[i], args[i+1])
		}
		switch args[i] {
		case "input":
			p.Input = v
		case "output":
			p.Output = v
		case "cache_read":
			p.CacheRead = v
		case "cache_write":
			p.CacheWrite = v
		default:
			return d.Errf("price %s: unknown kind %q (input, output, cache_read, cache_write)", p.Match, args[i])
		}
	}
	a.Prices = append(a.Prices, p)
	return nil
}

// unmarshalCaddyfile parses one limit line (requests, tokens, concurrent,
// budget), checking its syntax at once so the error names the line.
func (lc *Limits) unmarshalCaddyfile(d *caddyfile.Dispenser) error {
	kind := d.Val()
	var v string
	if !d.AllArgs(&v) {
		return d.ArgErr()
	}
	var err error
	switch kind {
	case "requests":
		_, err = limits.ParseRate(v)
		lc.Requests = v
	case "tokens":
		_, err = limits.ParseRate(v)
		lc.Tokens = v
	case "budget":
		_, err = limits.ParseBudget(v)
		lc.Budget = v
	case "budget_alert":
		_, err = parsePercent(v)
		lc.BudgetAlert = v
	case "concurrent":
		n, e := strconv.Atoi(v)
		if e != nil || n <= 0 {
			return d.Errf("concurrent: want a positive integer, not %q", v)
		}
		lc.Concurrent = n
	default:
		return d.Errf("unrecognized louter limit '%s' (requests, tokens, concurrent, budget, budget_alert)", kind)
	}
	if err != nil {
		return d.Err(err.Error())
	}
	return nil
}

// unmarshalRedis parses the redis line and its block.
func (a *ClientAccess) unmarshalRedis(d *caddyfile.Dispenser) error {
	if a.Redis != nil {
		return d.Err("redis already specified")
	}
	rc := &RedisCounters{}
	if !d.AllArgs(&rc.Address) {
		return d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		kind := d.Val()
		var v string
		if !d.AllArgs(&v) {
			return d.ArgErr()
		}
		switch kind {
		case "password":
			rc.Password = v
		case "prefix":
			rc.Prefix = v
		case "db":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return d.Errf("redis db: want a database number, not %q", v)
			}
			rc.DB = n
		case "timeout":
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("redis timeout: invalid duration %q", v)
			}
			rc.Timeout = caddy.Duration(dur)
		case "on_error":
			if v != "open" && v != "closed" {
				return d.Errf("redis on_error: want open or closed, not %q", v)
			}
			rc.OnError = v
		case "lease", "ledger_flush", "ledger_retention":
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("redis %s: invalid duration %q", kind, v)
			}
			switch kind {
			case "lease":
				rc.Lease = caddy.Duration(dur)
			case "ledger_flush":
				rc.LedgerFlush = caddy.Duration(dur)
			default:
				rc.LedgerRetention = caddy.Duration(dur)
			}
		default:
			return d.Errf("unrecognized louter redis subdirective '%s'", kind)
		}
	}
	a.Redis = rc
	return nil
}
