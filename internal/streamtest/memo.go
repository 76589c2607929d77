package streamtest

import (
	"bytes"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// Memo lets a split test try every way of cutting one upstream body
// into writes without decoding and encoding the body again for each cut.
//
// A cut can only change what the framer hands to the decoder: the decoder
// and the encoder never see write boundaries. The memo records, from one
// reference run, every decoder call (the framed event in, the IR events out)
// and every encoder call (the IR event in, the client frames out). Each split
// run uses a real Transcoder with a real framer and a real output; its
// decoder and encoder replay the recording for as long as they are called
// with exactly the recorded inputs, which is what the real ones would be
// given, and they are deterministic. At the first call that differs, the
// run goes live: a fresh real decoder and encoder are brought to the same
// state by feeding them the recorded inputs so far, and take over. So every
// split still gets exactly the output the real codecs would give it, and the
// JSON work is done once per body instead of once per cut; what each cut
// still costs is framing the body and comparing bytes.
//
// Replaying hides one bug a per-cut run could show by chance: a decoder
// keeping a framed event's bytes past its Decode call, which a framer may
// reuse. The reference run shows it always instead: its decoder is given a
// copy of each event that is poisoned as soon as Decode returns, so the
// reference output differs from a plain run's (see NewTranscodeMemo).
type Memo struct {
	newDec func() translate.StreamDecoder
	newEnc func() translate.StreamEncoder

	decodes []memoDecode
	encodes []memoEncode
	buf     []byte            // run's result, reused
	evs     []translate.Event // decode's result, reused
}

// memoDecode is one recorded decoder call: Decode(name, data), or End.
type memoDecode struct {
	end    bool
	name   string
	data   []byte
	events []translate.Event
}

// memoEncode is one recorded encoder call.
type memoEncode struct {
	ev     translate.Event
	frames []memoFrame
}

type memoFrame struct {
	name string
	data []byte
}

// NewTranscodeMemo records the reference run: body in one write through
// newFramer, then Close. It returns the memo and the reference output.
func NewTranscodeMemo(newFramer func() stream.Framer, newOut func() stream.Output, newDec func() translate.StreamDecoder, newEnc func() translate.StreamEncoder, body []byte) (*Memo, []byte) {
	m := &Memo{newDec: newDec, newEnc: newEnc}
	rec := &memoRecorder{m: m, dec: newDec(), enc: newEnc()}
	tc := stream.NewTranscoder(newFramer(), (*memoRecordDecoder)(rec), (*memoRecordEncoder)(rec), newOut())
	out := bytes.Clone(tc.Write(body))
	return m, append(out, tc.Close()...)
}

// Run transcodes body cut into writes, replaying the recording where it can.
// The result is valid until the next Run.
func (m *Memo) Run(framer stream.Framer, out stream.Output, writes [][]byte) []byte {
	got, _ := m.RunLive(framer, out, writes)
	return got
}

// RunLive is Run that also says after how many replayed decoder calls the
// run went live, -1 if it never did.
func (m *Memo) RunLive(framer stream.Framer, out stream.Output, writes [][]byte) ([]byte, int) {
	p := &memoPlayer{m: m, liveAtDecode: -1}
	tc := stream.NewTranscoder(framer, (*memoPlayDecoder)(p), (*memoPlayEncoder)(p), out)
	got := m.buf[:0]
	for _, w := range writes {
		got = append(got, tc.Write(w)...)
	}
	m.buf = append(got, tc.Close()...)
	return m.buf, p.liveAtDecode
}

// NewDecodeMemo records the decoder alone: body in one write through
// newFramer, then Close. It returns the memo and the reference events.
func NewDecodeMemo(newFramer func() stream.Framer, newDec func() translate.StreamDecoder, body []byte) (*Memo, []translate.Event, error) {
	m := &Memo{newDec: newDec}
	dec := (*memoRecordDecoder)(&memoRecorder{m: m, dec: newDec()})
	evs, err := DecodeWrites(nil, newFramer(), dec, [][]byte{body})
	return m, evs, err
}

// Decode is Run for a memo of the decoder alone: the IR events of body cut
// into writes, valid until the next Decode.
func (m *Memo) Decode(framer stream.Framer, writes [][]byte) ([]translate.Event, error) {
	evs, err := DecodeWrites(m.evs[:0], framer, (*memoPlayDecoder)(&memoPlayer{m: m, liveAtDecode: -1}), writes)
	m.evs = evs
	return evs, err
}

// DecodeWrites appends to evs the IR events dec makes of writes.
func DecodeWrites(evs []translate.Event, framer stream.Framer, dec translate.StreamDecoder, writes [][]byte) ([]translate.Event, error) {
	fn := func(name string, data []byte) { evs = dec.Decode(evs, name, data) }
	for _, w := range writes {
		if err := framer.Feed(w, fn); err != nil {
			return nil, err
		}
	}
	if err := framer.Close(fn); err != nil {
		return nil, err
	}
	return dec.End(evs), nil
}

type memoRecorder struct {
	m   *Memo
	dec translate.StreamDecoder
	enc translate.StreamEncoder
}

type (
	memoRecordDecoder memoRecorder
	memoRecordEncoder memoRecorder
)

func (r *memoRecordDecoder) Decode(dst []translate.Event, name string, data []byte) []translate.Event {
	in := bytes.Clone(data)
	n := len(dst)
	dst = r.dec.Decode(dst, name, in)
	for i := range in {
		in[i] = 0xff // not valid UTF-8: whatever kept it shows
	}
	r.m.decodes = append(r.m.decodes, memoDecode{name: name, data: bytes.Clone(data), events: append([]translate.Event(nil), dst[n:]...)})
	return dst
}

func (r *memoRecordDecoder) End(dst []translate.Event) []translate.Event {
	n := len(dst)
	dst = r.dec.End(dst)
	r.m.decodes = append(r.m.decodes, memoDecode{end: true, events: append([]translate.Event(nil), dst[n:]...)})
	return dst
}

func (r *memoRecordEncoder) Encode(w translate.FrameWriter, ev *translate.Event) {
	rec := memoEncode{ev: *ev}
	r.enc.Encode(frameFunc(func(name string, data []byte) {
		rec.frames = append(rec.frames, memoFrame{name: name, data: bytes.Clone(data)})
		w.WriteFrame(name, data)
	}), ev)
	r.m.encodes = append(r.m.encodes, rec)
}

type frameFunc func(name string, data []byte)

func (f frameFunc) WriteFrame(name string, data []byte) { f(name, data) }

// memoPlayer is one split run's decoder and encoder: replaying until a call
// differs from the recording, live after.
type memoPlayer struct {
	m            *Memo
	ndec, nenc   int // recorded calls replayed so far
	live         bool
	dec          translate.StreamDecoder
	enc          translate.StreamEncoder
	liveAtDecode int // ndec when it went live, -1 before
}

type (
	memoPlayDecoder memoPlayer
	memoPlayEncoder memoPlayer
)

// goLive brings fresh real codecs to the state the replayed calls left the
// recorded ones in.
func (p *memoPlayer) goLive() {
	p.live = true
	p.liveAtDecode = p.ndec
	p.dec = p.m.newDec()
	if p.m.newEnc != nil {
		p.enc = p.m.newEnc()
	}
	var sink []translate.Event
	for _, d := range p.m.decodes[:p.ndec] {
		if d.end {
			sink = p.dec.End(sink[:0])
		} else {
			sink = p.dec.Decode(sink[:0], d.name, d.data)
		}
	}
	discard := frameFunc(func(string, []byte) {})
	for i := range p.m.encodes[:p.nenc] {
		ev := p.m.encodes[i].ev
		p.enc.Encode(discard, &ev)
	}
}

func (d *memoPlayDecoder) Decode(dst []translate.Event, name string, data []byte) []translate.Event {
	p := (*memoPlayer)(d)
	if !p.live && p.ndec < len(p.m.decodes) {
		if r := &p.m.decodes[p.ndec]; !r.end && r.name == name && bytes.Equal(r.data, data) {
			p.ndec++
			return append(dst, r.events...)
		}
	}
	if !p.live {
		p.goLive()
	}
	return p.dec.Decode(dst, name, data)
}

func (d *memoPlayDecoder) End(dst []translate.Event) []translate.Event {
	p := (*memoPlayer)(d)
	if !p.live && p.ndec < len(p.m.decodes) {
		if r := &p.m.decodes[p.ndec]; r.end {
			p.ndec++
			return append(dst, r.events...)
		}
	}
	if !p.live {
		p.goLive()
	}
	return p.dec.End(dst)
}

func (e *memoPlayEncoder) Encode(w translate.FrameWriter, ev *translate.Event) {
	p := (*memoPlayer)(e)
	if !p.live && p.nenc < len(p.m.encodes) {
		if r := &p.m.encodes[p.nenc]; sameEvent(&r.ev, ev) {
			p.nenc++
			for _, f := range r.frames {
				w.WriteFrame(f.name, f.data)
			}
			return
		}
	}
	if !p.live {
		p.goLive()
	}
	p.enc.Encode(w, ev)
}

// SameEvents reports whether two IR event streams are equal event by event.
func SameEvents(a, b []translate.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameEvent(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

// sameEvent reports whether two IR events are equal field by field.
func sameEvent(a, b *translate.Event) bool {
	if a.Type != b.Type || a.Index != b.Index || a.Block != b.Block || a.ID != b.ID || a.Model != b.Model ||
		a.Name != b.Name || a.Text != b.Text || a.Signature != b.Signature || a.Stop != b.Stop || a.StopSequence != b.StopSequence {
		return false
	}
	if (a.Usage == nil) != (b.Usage == nil) || a.Usage != nil && *a.Usage != *b.Usage {
		return false
	}
	return (a.Err == nil) == (b.Err == nil) && (a.Err == nil || *a.Err == *b.Err)
}
