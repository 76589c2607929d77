package httpx

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"
)

// ParseByteSize reads a Caddyfile size option's value ("256MiB", "1GB"):
// positive and at most 1 PiB, else an error naming the option.
func ParseByteSize(d *caddyfile.Dispenser, opt, v string) (int64, error) {
	n, err := humanize.ParseBytes(v)
	if err != nil || n == 0 || n > 1<<50 {
		return 0, d.Errf("invalid %s %q", opt, v)
	}
	return int64(n), nil
}
