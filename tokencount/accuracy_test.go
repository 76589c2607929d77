package tokencount

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/louter/louter/translate"
)

var calibrate = flag.Bool("calibrate", false, "fit the estimator's weights on the corpus and print them")

// corpusDir holds the counting corpus (testdata/tokencount/generate.py).
const corpusDir = "../testdata/tokencount"

type corpusFile struct {
	name string
	size int
	req  *translate.Request
}

func loadCorpus(t testing.TB) []corpusFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(corpusDir, "*.json"))
	if err != nil || len(paths) < 5 {
		t.Fatalf("corpus: %d files, %v", len(paths), err)
	}
	paths = append(paths, "../testdata/anthropic/request_claude_code.json")
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	var out []corpusFile
	for _, p := range paths {
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		req, err := anth.DecodeRequest(body)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, corpusFile{name: filepath.Base(p), size: len(body), req: req})
	}
	return out
}

// corpusTexts returns every text the counters see in the corpus.
func corpusTexts(files []corpusFile) []string {
	var texts []string
	for _, f := range files {
		walk(f.req, OpenAI, counter{text: func(s string) int {
			texts = append(texts, s)
			return 0
		}})
	}
	return texts
}

// maxEstimateError is the largest relative difference between Estimate and
// Count (o200k_base) on any corpus request, as the README states it.
const maxEstimateError = 0.08

// maxQuickError is the same bound for Quick.
const maxQuickError = 0.10

// TestEstimateAccuracy checks the estimator against the BPE count on every
// corpus request, and prints the table the README shows (go test -v).
func TestEstimateAccuracy(t *testing.T) {
	files := loadCorpus(t)
	worst := 0.0
	var sumBPE, sumEst int
	var sumQuick int
	worstQuick := 0.0
	t.Logf("| request | bytes | o200k_base | cl100k_base | Estimate | error | Quick | error |")
	t.Logf("|---|---|---|---|---|---|---|---|")
	for _, f := range files {
		bpe := Count(f.req, OpenAI, "gpt-5")
		cl := Count(f.req, OpenAI, "gpt-4")
		est := Estimate(f.req, OpenAI)
		quick := Quick(f.req, OpenAI)
		rel := float64(est-bpe) / float64(bpe)
		relQuick := float64(quick-bpe) / float64(bpe)
		worst = max(worst, math.Abs(rel))
		worstQuick = max(worstQuick, math.Abs(relQuick))
		sumBPE += bpe
		sumEst += est
		sumQuick += quick
		t.Logf("| %s | %d | %d | %d | %d | %+.1f%% | %d | %+.1f%% |", f.name, f.size, bpe, cl, est, 100*rel, quick, 100*relQuick)
		if math.Abs(relQuick) > maxQuickError {
			t.Errorf("%s: Quick %d, o200k_base %d: off by %.1f%%, more than the %.0f%% the README states", f.name, quick, bpe, 100*relQuick, 100*maxQuickError)
		}
		if math.Abs(rel) > maxEstimateError {
			t.Errorf("%s: estimate %d, o200k_base %d: off by %.1f%%, more than the %.0f%% the README states", f.name, est, bpe, 100*rel, 100*maxEstimateError)
		}
	}
	t.Logf("Estimate: worst %.1f%%, whole corpus %+.1f%%; Quick: worst %.1f%%, whole corpus %+.1f%%",
		100*worst, 100*float64(sumEst-sumBPE)/float64(sumBPE), 100*worstQuick, 100*float64(sumQuick-sumBPE)/float64(sumBPE))
}

// TestCalibrate fits the estimator's weights by least squares on the corpus
// texts, cut into pieces of about 512 bytes, and prints them (go test -run
// TestCalibrate -calibrate -v).
func TestCalibrate(t *testing.T) {
	if !*calibrate {
		t.Skip("run with -calibrate")
	}
	var xs [][nFeatures]float64
	var ys []float64
	for _, s := range corpusTexts(loadCorpus(t)) {
		for len(s) > 0 {
			n := min(len(s), 512)
			for n < len(s) && !strings.ContainsRune(" \n", rune(s[n])) && n < len(s) {
				n++
			}
			piece := s[:n]
			s = s[n:]
			xs = append(xs, features(piece))
			ys = append(ys, float64(CountText(piece, O200kBase)))
		}
	}
	w := leastSquares(xs, ys)
	names := []string{"fWords", "fLongLetter", "fDigitGroup", "fPunct", "fPunctRun", "fSpaceRun", "fNewline", "fWide", "fOther"}
	var b strings.Builder
	for i, v := range w {
		fmt.Fprintf(&b, "%s: %.3f, ", names[i], v)
	}
	t.Logf("%d pieces; weights: %s", len(xs), b.String())
}

// leastSquares solves the normal equations XᵀX w = Xᵀy by Gaussian
// elimination.
func leastSquares(xs [][nFeatures]float64, ys []float64) [nFeatures]float64 {
	var a [nFeatures][nFeatures + 1]float64
	for k, x := range xs {
		for i := range nFeatures {
			for j := range nFeatures {
				a[i][j] += x[i] * x[j]
			}
			a[i][nFeatures] += x[i] * ys[k]
		}
	}
	for i := range nFeatures {
		a[i][i] += 1e-6 // keeps a feature the corpus lacks from making the system singular
		p := i
		for r := i + 1; r < nFeatures; r++ {
			if math.Abs(a[r][i]) > math.Abs(a[p][i]) {
				p = r
			}
		}
		a[i], a[p] = a[p], a[i]
		for r := range nFeatures {
			if r != i {
				f := a[r][i] / a[i][i]
				for c := i; c <= nFeatures; c++ {
					a[r][c] -= f * a[i][c]
				}
			}
		}
	}
	var w [nFeatures]float64
	for i := range nFeatures {
		w[i] = a[i][nFeatures] / a[i][i]
	}
	return w
}
