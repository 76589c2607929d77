package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// maxLine bounds one record read back: a recording's records are capped
// by max_exchange_size, plus the JSON around it.
const maxLine = 256 << 20

// ReadFile reads a recording file.
func ReadFile(name string) ([]*Exchange, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f)
}

// Read reads a recording: one JSON object per line; blank lines are
// skipped. A record of a later Version than this package's is refused.
func Read(r io.Reader) ([]*Exchange, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var out []*Exchange
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		x := new(Exchange)
		if err := json.Unmarshal(line, x); err != nil {
			return nil, fmt.Errorf("record: line %d: %w", n, err)
		}
		if x.Version > Version {
			return nil, fmt.Errorf("record: line %d: format version %d is newer than this louter's (%d)", n, x.Version, Version)
		}
		out = append(out, x)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	return out, nil
}
