package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Diff is one difference between what was recorded and what the replay
// produced.
type Diff struct {
	// Part is the part of the exchange: "backend_request",
	// "client_response", "client_response.events[3]", ...
	Part string
	// Path is the JSON path inside it ("$" for the whole), e.g.
	// "$.choices[0].delta.content".
	Path string
	// Want is what was recorded, Got what the replay produced (JSON text,
	// shortened; "(none)" when missing).
	Want, Got string
}

// String formats d for a report.
func (d Diff) String() string {
	return fmt.Sprintf("%s %s: recorded %s, replayed %s", d.Part, d.Path, d.Want, d.Got)
}

// generatedID matches the ids louter makes up for objects that arrive
// without one (translate's newID: a provider's prefix and 24 hex digits).
// They differ on every run, so two of them with the same prefix are equal.
var generatedID = regexp.MustCompile(`^(msg_|toolu_|call_|chatcmpl-|resp_|rs_|fc_|ctc_)[0-9a-f]{24}$`)

// volatileKeys are members whose numbers differ on every run: the
// creation times louter writes ("created" in OpenAI Chat chunks,
// "created_at" in Responses objects). Two numbers there are equal.
var volatileKeys = map[string]bool{"created": true, "created_at": true}

// VolatileFields describes what the comparison ignores, for reports and
// documentation.
const VolatileFields = `ids louter generates (msg_, toolu_, call_, chatcmpl-, resp_, rs_, fc_, ctc_ followed by 24 hex digits) and the creation times "created" and "created_at"`

// maxDiffs bounds the differences reported for one part.
const maxDiffs = 8

// diffJSON compares two JSON texts semantically (member order and number
// spelling do not matter) and appends their differences to out. Texts
// that are not JSON are compared as bytes.
func diffJSON(out []Diff, part string, want, got []byte) []Diff {
	wv, werr := decodeJSON(want)
	gv, gerr := decodeJSON(got)
	if werr != nil || gerr != nil {
		if !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(got)) {
			out = append(out, Diff{Part: part, Path: "$", Want: short(string(want)), Got: short(string(got))})
		}
		return out
	}
	d := differ{part: part, out: out}
	d.value("$", "", wv, gv)
	return d.out
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

type differ struct {
	part string
	out  []Diff
	n    int
}

func (d *differ) add(path string, want, got any) {
	d.n++
	if d.n > maxDiffs {
		return
	}
	d.out = append(d.out, Diff{Part: d.part, Path: path, Want: render(want), Got: render(got)})
}

// value compares w and g at path; key is the member name they are the
// value of ("" in arrays and at the top).
func (d *differ) value(path, key string, w, g any) {
	switch wv := w.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			d.add(path, w, g)
			return
		}
		for _, k := range sortedKeys(wv, gv) {
			p := path + "." + k
			wm, inW := wv[k]
			gm, inG := gv[k]
			switch {
			case !inW:
				d.add(p, missing{}, gm)
			case !inG:
				d.add(p, wm, missing{})
			default:
				d.value(p, k, wm, gm)
			}
		}
	case []any:
		gv, ok := g.([]any)
		if !ok {
			d.add(path, w, g)
			return
		}
		for i := 0; i < max(len(wv), len(gv)); i++ {
			p := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case i >= len(wv):
				d.add(p, missing{}, gv[i])
			case i >= len(gv):
				d.add(p, wv[i], missing{})
			default:
				d.value(p, "", wv[i], gv[i])
			}
		}
	case json.Number:
		gv, ok := g.(json.Number)
		if !ok {
			d.add(path, w, g)
			return
		}
		if volatileKeys[key] {
			return
		}
		if wv != gv {
			wf, e1 := wv.Float64()
			gf, e2 := gv.Float64()
			if e1 != nil || e2 != nil || wf != gf {
				d.add(path, w, g)
			}
		}
	case string:
		gv, ok := g.(string)
		if !ok {
			d.add(path, w, g)
			return
		}
		if wv == gv || sameGeneratedID(wv, gv) {
			return
		}
		d.add(path, w, g)
	default: // bool, nil
		if w != g {
			d.add(path, w, g)
		}
	}
}

// sameGeneratedID reports whether a and b are both ids louter generated,
// of the same kind.
func sameGeneratedID(a, b string) bool {
	if !generatedID.MatchString(a) || !generatedID.MatchString(b) {
		return false
	}
	return a[:len(a)-24] == b[:len(b)-24]
}

func sortedKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// missing stands for a value one side does not have.
type missing struct{}

func render(v any) string {
	if _, ok := v.(missing); ok {
		return "(none)"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return short(strings.TrimSuffix(b.String(), "\n"))
}

// short cuts a long value for a report.
func short(s string) string {
	const n = 120
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
