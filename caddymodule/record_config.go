package caddymodule

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/caddymodule/internal/redact"
	"github.com/louter/louter/record"
)

// RecordConfig turns on recorded exchanges: every chat request louter
// translates or passes through is written, with both sides of both hops,
// as one JSON object per line to files in Dir (see package record for the
// format, and `caddy louter replay` to replay them). Credentials are
// redacted: credential headers are never recorded, and every known key
// and anything shaped like one is replaced by "[redacted]". Recording is
// off unless configured.
type RecordConfig struct {
	// The directory the recordings are written to; created if needed.
	// Files are named louter-<UTC start time>.jsonl. Placeholders such as
	// {env.LOUTER_RECORD_DIR} are resolved when the configuration loads.
	Dir string `json:"dir"`

	// The size in bytes at which a file is closed and a new one started.
	// Default: 100 MiB.
	MaxSize int64 `json:"max_size,omitempty"`

	// How many files are kept; starting a new one deletes the oldest
	// beyond it. Default: 10.
	MaxFiles int `json:"max_files,omitempty"`

	// The most bytes of bodies and events one exchange keeps in memory
	// until it ends. Past it, further stream events are counted, not kept
	// (events_dropped), a body is left out (body_dropped), and the record
	// says "truncated": true; such a record is not replayed. Default: 8 MiB.
	MaxExchangeSize int64 `json:"max_exchange_size,omitempty"`

	// How many finished exchanges may wait for the disk. Writing is
	// asynchronous so a slow disk never stalls a response; an exchange
	// that finds the queue full is not recorded, and louter logs a
	// warning with the count of exchanges dropped. Default: 256.
	QueueSize int `json:"queue_size,omitempty"`
}

// recordPool holds the recording writers by their settings, so a config
// reload that keeps them keeps the writer (and its open file).
var recordPool = caddy.NewUsagePool()

// recordWriter is a pooled record.Writer.
type recordWriter struct{ *record.Writer }

// Destruct closes the writer once no configuration uses it.
func (w recordWriter) Destruct() error { return w.Close() }

// recording is louter's recording state, nil when record is not set.
type recording struct {
	key    string
	dir    string // the resolved directory, which the usage page reads (ops_ui.go)
	writer *record.Writer
	limit  int
	// keys are the backends' API keys, redacted from every record.
	keys []string
}

// provisionRecord starts (or reuses) the writer of the record setting.
func (l *Louter) provisionRecord(ctx caddy.Context) error {
	c := l.Record
	if c == nil {
		return nil
	}
	if err := c.validate(); err != nil {
		return err
	}
	dir := caddy.NewReplacer().ReplaceAll(c.Dir, "")
	if dir == "" {
		return fmt.Errorf("record: no directory")
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	key := fmt.Sprintf("%s|%d|%d|%d", dir, c.MaxSize, c.MaxFiles, c.QueueSize)
	logger := l.logger
	v, _, err := recordPool.LoadOrNew(key, func() (caddy.Destructor, error) {
		w, err := record.NewWriter(record.WriterConfig{
			Dir:       dir,
			MaxSize:   c.MaxSize,
			MaxFiles:  c.MaxFiles,
			QueueSize: c.QueueSize,
			Scrub:     redact.ScrubRecordLine,
			Warn: func(msg string, dropped int64, err error) {
				fields := []zap.Field{zap.String("dir", dir), zap.Int64("dropped", dropped)}
				if err != nil {
					fields = append(fields, zap.Error(err))
				}
				logger.Warn(msg, fields...)
			},
		})
		if err != nil {
			return nil, err
		}
		return recordWriter{w}, nil
	})
	if err != nil {
		return err
	}
	l.recording = &recording{key: key, dir: dir, writer: v.(recordWriter).Writer, limit: int(c.MaxExchangeSize)}
	for _, b := range l.Backends {
		if b != nil && b.apiKey != "" {
			l.recording.keys = append(l.recording.keys, b.apiKey)
		}
	}
	return nil
}

// Cleanup takes the handler off the diagnostics endpoint and releases the
// recording writer; the last configuration using it closes it.
func (l *Louter) Cleanup() error {
	l.unregisterDiagnostics() // diagnostics_admin.go
	l.access.close()          // client_keys.go
	l.stateful.Close()        // internal/stateful
	if l.recording != nil {
		_, err := recordPool.Delete(l.recording.key)
		return err
	}
	return nil
}

// validate checks the record setting.
func (c *RecordConfig) validate() error {
	if c == nil {
		return nil
	}
	if c.Dir == "" {
		return fmt.Errorf("record: dir is required")
	}
	if c.MaxSize < 0 || c.MaxFiles < 0 || c.MaxExchangeSize < 0 || c.QueueSize < 0 {
		return fmt.Errorf("record: max_size, max_files, max_exchange_size and queue_size must not be negative")
	}
	return nil
}

// checkRecord is `caddy louter check`'s look at the record setting: its
// numbers, and whether its directory (or, when it does not exist yet, the
// nearest parent that does) is writable here.
func checkRecord(where string, c *RecordConfig) []string {
	if c == nil {
		return nil
	}
	if err := c.validate(); err != nil {
		return []string{where + ": " + err.Error()}
	}
	dir := caddy.NewReplacer().ReplaceAll(c.Dir, "")
	for range 64 { // bounded: a path has fewer parents than that
		if fi, err := os.Stat(dir); err == nil {
			if !fi.IsDir() {
				return []string{fmt.Sprintf("%s: record: %s is not a directory", where, dir)}
			}
			if err := record.CheckDir(dir); err != nil {
				return []string{where + ": " + err.Error()}
			}
			return nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return nil
}

// unmarshalRecord parses
//
//	record <dir> {
//	    max_size <size>
//	    max_files <n>
//	    max_exchange_size <size>
//	    queue_size <n>
//	}
//
// where sizes take units (100MiB, 8MB).
func (l *Louter) unmarshalRecord(d *caddyfile.Dispenser) error {
	if l.Record != nil {
		return d.Err("record already specified")
	}
	c := new(RecordConfig)
	if !d.Args(&c.Dir) {
		return d.ArgErr()
	}
	if d.NextArg() {
		return d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		var v string
		if !d.AllArgs(&v) {
			return d.ArgErr()
		}
		switch opt {
		case "max_size", "max_exchange_size":
			n, err := httpx.ParseByteSize(d, opt, v)
			if err != nil {
				return err
			}
			if opt == "max_size" {
				c.MaxSize = n
			} else {
				c.MaxExchangeSize = n
			}
		case "max_files", "queue_size":
			var n int
			if _, err := fmt.Sscanf(v, "%d", &n); err != nil || n <= 0 || fmt.Sprint(n) != v {
				return d.Errf("invalid %s %q", opt, v)
			}
			if opt == "max_files" {
				c.MaxFiles = n
			} else {
				c.QueueSize = n
			}
		default:
			return d.Errf("unrecognized record option '%s'", opt)
		}
	}
	l.Record = c
	return nil
}

// Interface guards
var (
	_ caddy.CleanerUpper = (*Louter)(nil)
	_ caddy.Destructor   = recordWriter{}
)
