package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/sim"
)

func TestQuantile(t *testing.T) {
	cases := []struct {
		v    []float64
		q    float64
		want float64
	}{
		{[]float64{1}, 0.5, 1},
		{[]float64{1, 2, 3, 4}, 0, 1},
		{[]float64{1, 2, 3, 4}, 1, 4},
		{[]float64{1, 2, 3, 4}, 0.5, 2.5},
		{[]float64{0, 10}, 0.95, 9.5},
	}
	for _, c := range cases {
		if got := Quantile(c.v, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile(%v, %v) = %v, want %v", c.v, c.q, got, c.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("Quantile of nothing is not NaN")
	}
}

// TestSummarize checks every figure on a hand-computed two-user case on a
// 4-GPU cluster.
func TestSummarize(t *testing.T) {
	r := resultOf([]row{
		{ID: "1", User: "a", JobResult: sim.JobResult{GPUs: 2, Submit: 0, Start: 0, End: 100, RunTime: 100, Reference: 100, Predicted: 110}},
		{ID: "2", User: "a", JobResult: sim.JobResult{GPUs: 2, Submit: 0, Start: 0, End: 50, RunTime: 50, Reference: 50, Predicted: 100}},
		{ID: "3", User: "b", JobResult: sim.JobResult{GPUs: 4, Submit: 10, Start: 100, End: 200, RunTime: 100, Reference: 100, Predicted: 100}},
	}, 4)
	r.Policy, r.Predictor, r.Events = "p", "mean", 10
	s := Summarize(r, 300)
	want := map[string][2]float64{
		"total":    {s.TotalJCT, 100 + 50 + 190},
		"avg":      {s.AvgJCT, 340.0 / 3},
		"p50":      {s.P50JCT, 100},
		"avgWait":  {s.AvgWait, 30},
		"makespan": {s.Makespan, 200},
		// busy GPU-seconds 200+100+400 over 4 GPUs × 200 s
		"util":     {s.Utilization, 700.0 / 800},
		"ratio":    {s.RatioToLB, 340.0 / 300},
		"mae":      {s.PredMAE, (10 + 50 + 0) / 3.0},
		"within25": {s.PredWithin25, 2.0 / 3},
		"slowdown": {s.AvgSlowdown, (1 + 1 + 1.9) / 3},
		// user means: a = 1, b = 1.9; Jain = (2.9)² / (2·(1+3.61))
		"jain": {s.Fairness, 2.9 * 2.9 / (2 * (1 + 3.61))},
	}
	for k, v := range want {
		if math.Abs(v[0]-v[1]) > 1e-9 {
			t.Errorf("%s = %v, want %v", k, v[0], v[1])
		}
	}
}

func TestWriters(t *testing.T) {
	rep := New(3, 1, 4, sim.LowerBound{Total: 300, Virtual: 120, Length: 300, MeanBusy: 250, Binding: sim.BoundLength})
	fair := Fairness(resultOf(fairJobs(), 0), nil, 1)
	rep.Policies = []Summary{{Policy: "asrpt", Predictor: "mean", Jobs: 3, TotalJCT: 340, RatioToLB: 340.0 / 300, FairnessReport: &fair}}
	rep.TableAccounts = 2
	var table, js, cs bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteCSV(&cs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"asrpt", "1.133", "lower bound total JCT 300 s (virtual SRPT 120, Σ run time 300, mean busy 250; binding length)",
		"target shares equal among the accounts", "fairness of asrpt: the 2 accounts with the most GPU-hours, of 3",
		"fairness of asrpt: the 1 longest waits"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	for _, want := range []string{`"lower_bound_total_jct_s": 300`, `"lower_bound_virtual_srpt_s": 120`,
		`"lower_bound_sum_runtime_s": 300`, `"lower_bound_mean_busy_s": 250`, `"lower_bound_binding": "length"`,
		`"policy": "asrpt"`, `"ratio_to_lb": 1.1333`, `"contended_share": 0.5757`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %q:\n%s", want, js.String())
		}
	}
	lines := strings.Split(strings.TrimSpace(cs.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "asrpt,mean,3,340,") {
		t.Errorf("CSV:\n%s", cs.String())
	}
	// Every key of a policy's JSON is a CSV column, and the other way round
	// (but for the report's lower bound and the fairness report).
	var doc struct {
		Policies []map[string]any `json:"policies"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || len(doc.Policies) != 1 {
		t.Fatalf("JSON: %v", err)
	}
	header := strings.Split(lines[0], ",")
	for k := range doc.Policies[0] {
		if !slices.Contains(header, k) && k != "fairness" {
			t.Errorf("JSON key %s is not a CSV column: %v", k, header)
		}
	}
	for _, c := range header[:len(header)-1] {
		if _, ok := doc.Policies[0][c]; !ok && c != "trainings" && c != "train_s" {
			t.Errorf("CSV column %s is not a JSON key", c)
		}
	}
}

func TestWriteFileAtomicLeavesNothingOnError(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	boom := errors.New("boom")
	err := WriteFileAtomic(p, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	if err := WriteFileAtomic(p, func(w io.Writer) error { _, err := io.WriteString(w, "ok"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "ok" {
		t.Errorf("content %q", b)
	}
}

func TestPlots(t *testing.T) {
	dir := t.TempDir()
	r := &sim.Result{Policy: "p", Jobs: []sim.JobResult{{Submit: 0, Start: 1, End: 10}, {Submit: 0, Start: 0, End: 100}},
		Queue: []sim.Sample{{Time: 0, Pending: 1}, {Time: 3600, Pending: 0}}}
	for _, name := range []string{"cdf.svg", "cdf.png"} {
		if err := PlotJCTCDF(filepath.Join(dir, name), []*sim.Result{r}); err != nil {
			t.Fatal(err)
		}
	}
	if err := PlotQueue(filepath.Join(dir, "q.svg"), []*sim.Result{r}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "cdf.svg"))
	if err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("cdf.svg not an SVG: %v", err)
	}
	if err := PlotQueue(filepath.Join(dir, "q.txt"), []*sim.Result{r}); err == nil {
		t.Error("unsupported format accepted")
	}
}

// TestWriteLoop: the closed loop's block lists the cycles and the writes
// by kind of each closed-loop policy, and is absent without one.
func TestWriteLoop(t *testing.T) {
	rep := New(3, 1, 4, sim.LowerBound{Total: 300})
	rep.Policies = []Summary{{Policy: "asrpt", Jobs: 3}}
	var without bytes.Buffer
	if err := rep.WriteTable(&without); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(without.String(), "closed loop") {
		t.Errorf("closed-loop block without a closed loop:\n%s", without.String())
	}
	rep.Policies = append(rep.Policies, Summary{Policy: "asrpt-sidecar", Jobs: 3,
		Loop: &LoopFigures{Cycles: 41, Writes: map[string]int{"site_factor": 17, "nodes": 5}}})
	var table, js bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`asrpt-sidecar +41 +17 +0 +5`).MatchString(table.String()) {
		t.Errorf("table lacks the closed loop's row:\n%s", table.String())
	}
	if !strings.Contains(js.String(), `"closed_loop": {`) || !strings.Contains(js.String(), `"site_factor": 17`) {
		t.Errorf("JSON lacks the closed loop:\n%s", js.String())
	}
}
