package translate

import "testing"

// watchResumeHead is the part an OpenAI Chat stream's chunks repeat.
const watchResumeHead = `{"id":"c","object":"chat.completion.chunk","created":17,"model":"m",`

// watchResumeTails follow watchResumeHead, or stand alone: chunks sound
// and broken, after the head's comma and in place of it.
var watchResumeTails = []string{
	`"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}`,
	`"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	`"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}`,
	`"choices":[{"index":0,"delta":{"content":"b"}}],"error":{"message":"x"}}`,
	` "choices":[]}`,
	`}`,
	` }`,
	`,"choices":[]}`,
	`"choices":[{"delta":{"content":"c"}]}`,
	`"choices":[]`,
	`"choices":[]} x`,
	`"choices"`,
	`"usage":null,"choices":[]}`,
	`x"choices":[]}`,
}

// watchVerdicts checks each event with one StreamWatch and each with a
// fresh one, and fails when the two disagree: in the verdict, the
// completeness, the error or the usage.
func watchVerdicts(t *testing.T, events []string) {
	t.Helper()
	kept := NewStreamWatch(ProtocolOpenAIChat)
	for _, ev := range events {
		fresh := NewStreamWatch(ProtocolOpenAIChat)
		want := fresh.Check("", []byte(ev))
		got := kept.Check("", []byte(ev))
		if got != want {
			t.Fatalf("%q: verdict %d after the earlier events, %d fresh", ev, got, want)
		}
		if got == WatchMalformed {
			kept = NewStreamWatch(ProtocolOpenAIChat) // a stream ends at a malformed event
			continue
		}
		gu, gok := kept.Usage()
		wu, wok := fresh.Usage()
		if want == WatchContinue && (kept.Complete() != fresh.Complete() || gok != wok || gok && gu != wu) {
			t.Fatalf("%q: complete %v usage %v %+v after the earlier events; fresh %v %v %+v",
				ev, kept.Complete(), gok, gu, fresh.Complete(), wok, wu)
		}
		if got == WatchEnd && kept.Errored() != fresh.Errored() {
			t.Fatalf("%q: errored %v after the earlier events, %v fresh", ev, kept.Errored(), fresh.Errored())
		}
	}
}

// TestStreamWatchResume holds a chunk judged after others that share its
// first members to the same chunk judged by a fresh watch.
func TestStreamWatchResume(t *testing.T) {
	for _, first := range []string{watchResumeHead + watchResumeTails[0], `{"id":"c","choices":[]}`, `{"choices":[]}`} {
		for _, tail := range watchResumeTails {
			watchVerdicts(t, []string{first, watchResumeHead + tail, watchResumeHead + tail, tail})
		}
	}
	// A number the prefix would end within: 17 kept, 170 next.
	watchVerdicts(t, []string{`{"created":17,"choices":[]}`, `{"created":170,"choices":[]}`})
	watchVerdicts(t, []string{`{"a":true,"choices":[]}`, `{"a":true ,"choices":[]}`, `{"a":truex,"choices":[]}`})
}

func FuzzStreamWatchResume(f *testing.F) {
	for _, tail := range watchResumeTails {
		f.Add([]byte(watchResumeHead+watchResumeTails[0]), []byte(watchResumeHead+tail))
	}
	for _, c := range swapNext {
		f.Add([]byte(swapChunk(`{"content":"a"}`, "null")), []byte(c.event))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		watchVerdicts(t, []string{string(a), string(b)})
	})
}
