package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestParseSeeds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int64
		err  string
	}{
		{"", []int64{7}, ""},
		{"1,2,3", []int64{1, 2, 3}, ""},
		{" 3 , -1 ", []int64{3, -1}, ""},
		{"1,x", nil, `seed "x" is not an integer`},
		{"2,2", nil, "seed 2 given twice"},
		{strings.Repeat("1,", maxSeeds) + "99", nil, "want at most 16"},
	} {
		got, err := parseSeeds(tc.in, 7)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseSeeds(%q) = %v, %v; want an error saying %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parseSeeds(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestQualityReferenceAndHeldOut: --reference takes mean or none, and
// --held-out lists the held-out cases in place of the suite's; a held-out
// run replays the candidate with the family median beside the forest.
func TestQualityReferenceAndHeldOut(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"quality", "--reference", "forest"}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), `--reference "forest": want mean or none`) {
		t.Errorf("exit %d, stderr %q; want exit 2 naming --reference", code, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"quality", "--held-out", "--list"}, &stdout, &stderr); code != 0 ||
		strings.Count(stdout.String(), "heldout-") != 3 || strings.Contains(stdout.String(), "gen-0.9") {
		t.Errorf("exit %d, list %q, stderr %q; want the three held-out cases alone", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"quality", "--held-out", "--cases", "heldout-gen", "--policies", "fifo,asrpt", "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	var res struct {
		Reference string `json:"reference_predictor"`
		Cases     []struct {
			Reference *struct {
				Predictor string `json:"predictor"`
			} `json:"reference"`
		} `json:"cases"`
		Summary struct {
			VsReference struct {
				Cases int `json:"cases"`
			} `json:"vs_reference"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Reference != "mean" || len(res.Cases) != 1 || res.Cases[0].Reference == nil ||
		res.Cases[0].Reference.Predictor != "mean" || res.Summary.VsReference.Cases != 1 {
		t.Errorf("result %+v: want asrpt replayed with mean beside the forest", res)
	}
}

// TestQualityNoiseFlags: --noise and --noise-scale are bounded, and
// --noise needs a reference predictor to perturb.
func TestQualityNoiseFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--noise", "17"}, "--noise 17: want 0 to 16"},
		{[]string{"--noise", "-1"}, "--noise -1: want 0 to 16"},
		{[]string{"--noise", "1", "--noise-scale", "0"}, "--noise-scale 0: want more than 0"},
		{[]string{"--noise", "1", "--noise-scale", "NaN"}, "--noise-scale NaN: want more than 0"},
		{[]string{"--noise", "1", "--reference", "none"}, "--noise 1 perturbs the reference predictor, and none is replayed"},
		{[]string{"--noise", "1", "--predictor", "mean"}, "--noise 1 perturbs the reference predictor, and none is replayed"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"quality", "--held-out", "--cases", "heldout-gen", "--policies", "asrpt"}, tc.args...)
		if code := run(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestQualityReferenceRanksByMedian: the family median ranked by the
// expected value is a candidate of its own, judged against the family
// median ranked by the median.
func TestQualityReferenceRanksByMedian(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"quality", "--held-out", "--cases", "heldout-gen", "--policies", "asrpt", "--predictor", "mean", "--rank", "expected", "--json"}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	var res struct {
		Reference string `json:"reference_predictor"`
		Rank      string `json:"rank"`
		Cases     []struct {
			Policies []struct {
				TotalJCT float64 `json:"total_jct_s"`
			} `json:"policies"`
			Reference *struct {
				TotalJCT float64 `json:"total_jct_s"`
			} `json:"reference"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Reference != "mean" || res.Rank != "expected" || len(res.Cases) != 1 || res.Cases[0].Reference == nil ||
		res.Cases[0].Reference.TotalJCT == res.Cases[0].Policies[0].TotalJCT {
		t.Errorf("result %+v: want mean ranked by the expected value against mean ranked by the median", res)
	}
}

// TestQualityDefaultPredictor: without --predictor the suite runs
// predictor.Default ranked by its expected value (policy.RankFor), against
// the family median, and a predictor that reads no seed is replayed with
// the first of --seeds alone; the forest keeps its seeds and the median
// ranking.
func TestQualityDefaultPredictor(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		rank      string
		seeds     int
		predictor string
		note      bool
	}{
		{nil, "expected", 1, "mean-gpus", true},
		{[]string{"--predictor", "mean-gpus", "--rank", "median"}, "median", 1, "mean-gpus", true},
		{[]string{"--predictor", "forest"}, "median", 2, "forest", false},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"quality", "--held-out", "--cases", "heldout-gen", "--policies", "asrpt", "--seeds", "1,2", "--json"}, tc.args...)
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", tc.args, code, stderr.String())
		}
		var res struct {
			Rank  string  `json:"rank"`
			Seeds []int64 `json:"seeds"`
			Cases []struct {
				Policies []struct {
					Predictor string `json:"predictor"`
				} `json:"policies"`
			} `json:"cases"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if res.Rank != tc.rank || len(res.Seeds) != tc.seeds || len(res.Cases) != tc.seeds || res.Cases[0].Policies[0].Predictor != tc.predictor {
			t.Errorf("%v: rank %q, seeds %v, %d cases, %+v; want rank %s, %d seeds, predictor %s", tc.args, res.Rank, res.Seeds, len(res.Cases), res.Cases, tc.rank, tc.seeds, tc.predictor)
		}
		if note := strings.Contains(stderr.String(), "reads no seed: replaying with seed 1 alone"); note != tc.note {
			t.Errorf("%v: stderr %q: note of the dropped seeds %v, want %v", tc.args, stderr.String(), note, tc.note)
		}
	}
}
