package caddymodule

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"
)

func TestUnmarshalRecord(t *testing.T) {
	tests := []struct {
		name, input string
		want        *RecordConfig
		err         string
	}{
		{"dir only", `louter {
			record /var/log/louter
		}`, &RecordConfig{Dir: "/var/log/louter"}, ""},
		{"every option", `louter {
			record /tmp/rec {
				max_size 50MiB
				max_files 4
				max_exchange_size 2MiB
				queue_size 64
			}
		}`, &RecordConfig{Dir: "/tmp/rec", MaxSize: 50 << 20, MaxFiles: 4, MaxExchangeSize: 2 << 20, QueueSize: 64}, ""},
		{"no dir", `louter {
			record
		}`, nil, "wrong argument count"},
		{"two dirs", `louter {
			record a b
		}`, nil, "wrong argument count"},
		{"twice", `louter {
			record a
			record b
		}`, nil, "record already specified"},
		{"bad size", `louter {
			record a {
				max_size lots
			}
		}`, nil, `invalid max_size "lots"`},
		{"bad count", `louter {
			record a {
				max_files 0
			}
		}`, nil, `invalid max_files "0"`},
		{"unknown option", `louter {
			record a {
				compress
			}
		}`, nil, "wrong argument count"},
		{"unknown option with value", `louter {
			record a {
				compress gzip
			}
		}`, nil, "unrecognized record option 'compress'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Louter
			err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *l.Record != *tt.want {
				t.Errorf("record = %+v, want %+v", *l.Record, *tt.want)
			}
		})
	}
}

func TestCheckRecord(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(dir, "ro")
	if err := os.Mkdir(readOnly, 0o500); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		c    *RecordConfig
		want string
	}{
		{"none", nil, ""},
		{"writable", &RecordConfig{Dir: dir}, ""},
		{"not created yet", &RecordConfig{Dir: filepath.Join(dir, "a", "b")}, ""},
		{"a file", &RecordConfig{Dir: file}, "is not a directory"},
		{"negative", &RecordConfig{Dir: dir, MaxFiles: -1}, "must not be negative"},
		{"no dir", &RecordConfig{}, "dir is required"},
	}
	if os.Geteuid() != 0 { // root writes anywhere
		tests = append(tests, struct {
			name string
			c    *RecordConfig
			want string
		}{"read-only", &RecordConfig{Dir: filepath.Join(readOnly, "sub")}, "not writable"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(checkRecord("h", tt.c), "\n")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("problems %q, want %q", got, tt.want)
			}
		})
	}
}

// A reload with the same settings shares the writer; the last
// configuration to let go closes it.
func TestRecordWriterPooled(t *testing.T) {
	cfg := &RecordConfig{Dir: t.TempDir(), MaxFiles: 3}
	a, b := &Louter{Record: cfg}, &Louter{Record: cfg}
	for _, l := range []*Louter{a, b} {
		l.logger = zap.NewNop()
		if err := l.provisionRecord(caddy.Context{}); err != nil {
			t.Fatal(err)
		}
	}
	if a.recording.writer != b.recording.writer {
		t.Fatal("the same settings got two writers")
	}
	other := &Louter{Record: &RecordConfig{Dir: cfg.Dir, MaxFiles: 4}, logger: zap.NewNop()}
	if err := other.provisionRecord(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	if other.recording.writer == a.recording.writer {
		t.Error("other settings shared the writer")
	}
	for _, l := range []*Louter{a, b, other} {
		if err := l.Cleanup(); err != nil {
			t.Fatal(err)
		}
	}
	if _, loaded := recordPool.References(a.recording.key); loaded {
		t.Error("the writer outlived its configurations")
	}
}
