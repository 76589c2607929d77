package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of WriterConfig.
const (
	DefaultMaxSize   = 100 << 20 // bytes per file
	DefaultMaxFiles  = 10
	DefaultQueueSize = 256
)

// File names: filePrefix, the UTC time the file was started, fileSuffix.
const (
	filePrefix = "louter-"
	fileSuffix = ".jsonl"
	fileTime   = "20060102T150405.000Z"
)

// WriterConfig configures a Writer.
type WriterConfig struct {
	// Dir is the directory the files are written to; it is created if
	// needed.
	Dir string
	// MaxSize is the size at which a file is closed and the next one
	// started (default DefaultMaxSize). A single record larger than it
	// still goes in, alone in its file.
	MaxSize int64
	// MaxFiles is how many files are kept; the oldest is deleted when a
	// new one would exceed it (default DefaultMaxFiles).
	MaxFiles int
	// QueueSize is how many records may wait for the disk; a record that
	// finds the queue full is dropped (default DefaultQueueSize).
	QueueSize int
	// Scrub, when set, redacts a record's line before it is written: the
	// known secrets of the exchange and anything shaped like a credential.
	Scrub func(line []byte, known []string) []byte
	// Warn, when set, reports what could not be written: dropped records
	// (with the running count) and disk errors. It is called at most once
	// a second.
	Warn func(msg string, dropped int64, err error)
}

// Writer writes exchanges as JSON Lines to a directory of rotated,
// size-capped files. Submit never blocks: records go through a bounded
// queue to one goroutine that encodes, redacts and writes them, so a slow
// disk never stalls a stream; when the queue is full the record is dropped,
// counted (Dropped) and reported through Warn.
type Writer struct {
	cfg   WriterConfig
	queue chan *Exchange
	done  chan struct{}

	closeOnce sync.Once
	dropped   atomic.Int64
	written   atomic.Int64
	// lastWarn is the Unix nanoseconds of the last Warn call.
	lastWarn atomic.Int64

	// Owned by the writing goroutine.
	file     *os.File
	size     int64
	buf      []byte
	lastBase string // the name of the last file started, without suffix
	seq      int    // its sequence number within its millisecond
}

// NewWriter creates dir if needed and starts the writing goroutine. The
// first file is opened with the first record.
func NewWriter(cfg WriterConfig) (*Writer, error) {
	if cfg.Dir == "" {
		return nil, errors.New("record: no directory")
	}
	if cfg.MaxSize <= 0 {
		cfg.MaxSize = DefaultMaxSize
	}
	if cfg.MaxFiles <= 0 {
		cfg.MaxFiles = DefaultMaxFiles
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = DefaultQueueSize
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	if err := CheckDir(cfg.Dir); err != nil {
		return nil, err
	}
	w := &Writer{cfg: cfg, queue: make(chan *Exchange, cfg.QueueSize), done: make(chan struct{})}
	go w.run()
	return w, nil
}

// CheckDir reports whether files can be created in dir.
func CheckDir(dir string) error {
	f, err := os.CreateTemp(dir, ".louter-check-*")
	if err != nil {
		return fmt.Errorf("record: directory %s is not writable: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// Submit queues x for writing, or drops it when the queue is full. It
// reports whether x was queued. x must not be used afterwards.
func (w *Writer) Submit(x *Exchange) bool {
	select {
	case w.queue <- x:
		return true
	default:
		n := w.dropped.Add(1)
		w.warn("recording queue full: exchange not recorded", n, nil)
		return false
	}
}

// Dropped returns how many records were dropped because the queue was full
// or they could not be encoded.
func (w *Writer) Dropped() int64 { return w.dropped.Load() }

// Written returns how many records were written.
func (w *Writer) Written() int64 { return w.written.Load() }

// Close writes what is queued, closes the file and stops the goroutine.
// Submit must not be called after Close.
func (w *Writer) Close() error {
	w.closeOnce.Do(func() { close(w.queue) })
	<-w.done
	return nil
}

func (w *Writer) warn(msg string, dropped int64, err error) {
	if w.cfg.Warn == nil {
		return
	}
	now := time.Now().UnixNano()
	last := w.lastWarn.Load()
	if now-last < int64(time.Second) || !w.lastWarn.CompareAndSwap(last, now) {
		return
	}
	w.cfg.Warn(msg, dropped, err)
}

func (w *Writer) run() {
	defer close(w.done)
	for x := range w.queue {
		if err := w.write(x); err != nil {
			n := w.dropped.Add(1)
			w.warn("cannot write a recorded exchange", n, err)
		}
	}
	if w.file != nil {
		_ = w.file.Close()
	}
}

// write encodes, redacts and appends one record, rolling the file first
// when it would outgrow MaxSize.
func (w *Writer) write(x *Exchange) error {
	line, err := w.encode(x)
	if err != nil {
		return err
	}
	if w.file != nil && w.size > 0 && w.size+int64(len(line)) > w.cfg.MaxSize {
		_ = w.file.Close()
		w.file = nil
	}
	if w.file == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	n, err := w.file.Write(line)
	w.size += int64(n)
	if err != nil {
		return err
	}
	w.written.Add(1)
	return nil
}

// encode returns x's line, redacted, ending in a newline.
func (w *Writer) encode(x *Exchange) ([]byte, error) {
	w.buf = append(x.appendJSON(w.buf[:0]), '\n')
	line := w.buf
	if w.cfg.Scrub != nil {
		line = w.cfg.Scrub(line, x.secrets)
	}
	return line, nil
}

// open starts a new file named by the current time and deletes the
// oldest files beyond MaxFiles.
func (w *Writer) open() error {
	base := filePrefix + time.Now().UTC().Format(fileTime)
	if base == w.lastBase {
		w.seq++ // files started in the same millisecond get a sequence number
	} else {
		w.lastBase, w.seq = base, 0
	}
	var f *os.File
	var err error
	for range 100 { // a name another writer took gets the next number
		name := base + fileSuffix
		if w.seq > 0 {
			name = fmt.Sprintf("%s-%04d%s", base, w.seq, fileSuffix)
		}
		f, err = os.OpenFile(filepath.Join(w.cfg.Dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, os.ErrExist) {
			break
		}
		w.seq++
	}
	if err != nil {
		return err
	}
	w.file, w.size = f, 0
	w.prune()
	return nil
}

// prune deletes the oldest recording files beyond MaxFiles.
func (w *Writer) prune() {
	files, err := Files(w.cfg.Dir)
	if err != nil || len(files) <= w.cfg.MaxFiles {
		return
	}
	for _, f := range files[:len(files)-w.cfg.MaxFiles] {
		if err := os.Remove(f); err != nil {
			w.warn("cannot delete an old recording", w.dropped.Load(), err)
		}
	}
}

// Files returns the recording files in dir, oldest first.
func Files(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() && strings.HasPrefix(n, filePrefix) && strings.HasSuffix(n, fileSuffix) {
			out = append(out, filepath.Join(dir, n))
		}
	}
	// The names start with the time in a sortable form; a same-millisecond
	// sequence number (4 digits) sorts after its base name.
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(sortKey(a), sortKey(b)) })
	return out, nil
}

// sortKey makes "x-1.jsonl" sort after "x.jsonl".
func sortKey(name string) string {
	return strings.TrimSuffix(name, fileSuffix) + "\x00"
}
