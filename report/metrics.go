// Package report turns replay results into the figures admins compare
// policies by: completion-time statistics against the lower bound, queueing
// delay, makespan, utilisation, prediction error and fairness; as a table,
// JSON, CSV and plots.
package report

import (
	"math"
	"slices"

	"github.com/asrpt/asrpt/sim"
)

// Summary holds one policy's figures. Times are seconds. The JSON names are
// the stable output contract of `asrpt replay --json`.
type Summary struct {
	Policy      string  `json:"policy"`
	Predictor   string  `json:"predictor"`
	Jobs        int     `json:"jobs"`
	TotalJCT    float64 `json:"total_jct_s"`
	AvgJCT      float64 `json:"avg_jct_s"`
	P50JCT      float64 `json:"p50_jct_s"`
	P95JCT      float64 `json:"p95_jct_s"`
	P99JCT      float64 `json:"p99_jct_s"`
	AvgWait     float64 `json:"avg_wait_s"`
	P99Wait     float64 `json:"p99_wait_s"`
	Makespan    float64 `json:"makespan_s"`
	Utilization float64 `json:"utilization"`
	AvgSlowdown float64 `json:"avg_slowdown"`
	RatioToLB   float64 `json:"ratio_to_lb"`
	// PredMAE is the mean absolute error of the predictions made at submit
	// against the reference run times, seconds.
	PredMAE float64 `json:"pred_mae_s"`
	// PredWithin25 is the share of predictions within ±25% of the truth.
	PredWithin25 float64 `json:"pred_within_25pct"`
	// Fairness is Jain's index over users' mean slowdowns (1 = equal).
	Fairness    float64 `json:"fairness_jain"`
	Preemptions int     `json:"preemptions"`
	// PreemptedJobs counts the jobs preempted at least once, and
	// MostPreemptions is the most times one job was (restarts per job).
	PreemptedJobs   int `json:"preempted_jobs"`
	MostPreemptions int `json:"most_preemptions"`
	// LostGPUHours is the GPU time preemption wasted: restart costs and
	// lost work (sim.JobResult.Lost), GPU-hours.
	LostGPUHours float64 `json:"lost_gpu_h"`
	Events       int     `json:"events"`
	// Trainings and TrainSeconds count the online forest's trainings and the
	// wall time they took (0 for other predictors).
	Trainings    int     `json:"trainings,omitempty"`
	TrainSeconds float64 `json:"train_s,omitempty"`
	// WallSeconds and EventsPerSecond describe the replay's own cost.
	WallSeconds     float64 `json:"wall_s"`
	EventsPerSecond float64 `json:"events_per_s"`
	// FairnessReport holds who waited and who got the cluster when it was
	// short (Fairness); nil unless the caller computed it. It has no CSV
	// column.
	FairnessReport *FairnessReport `json:"fairness,omitempty" csv:"-"`
	// Why is the story of the job traced with asrpt replay --why
	// (sim.Result.Why): when it waited and why, when it started; WhyDropped
	// counts the steps past sim.MaxWhySteps. No CSV column.
	Why []sim.WhyStep `json:"why,omitempty" csv:"-"`
	// Paired compares the replay job by job with the baseline policy's
	// (asrpt replay --against); nil for the baseline itself or without
	// one. No CSV column.
	Paired     *Paired `json:"paired,omitempty" csv:"-"`
	WhyDropped int     `json:"why_dropped,omitempty" csv:"-"`
	// Loop is what the sidecar did in a closed-loop replay (asrpt-sidecar);
	// nil for any other policy. No CSV column.
	Loop *LoopFigures `json:"closed_loop,omitempty" csv:"-"`
}

// LoopFigures are the closed loop's: the sidecar's cycles and the writes
// it sent to the replay's Slurm.
type LoopFigures struct {
	// Cycles counts the sidecar's cycles (the polls not skipped).
	Cycles int `json:"cycles"`
	// Writes counts the updates sent, by kind: site_factor, priority,
	// nodes.
	Writes map[string]int `json:"writes"`
}

// Summarize computes the figures of one replay against lower bound lb
// (total JCT, seconds).
func Summarize(r *sim.Result, lb float64) Summary {
	s := Summary{Policy: r.Policy, Predictor: r.Predictor, Jobs: len(r.Jobs), Events: r.Events, Why: r.Why, WhyDropped: r.WhyDropped}
	n := len(r.Jobs)
	if n == 0 {
		return s
	}
	jct := make([]float64, n)
	wait := make([]float64, n)
	first, last := math.Inf(1), math.Inf(-1)
	var busy, absErr float64
	within := 0
	type acc struct {
		sum float64
		n   int
	}
	users := map[string]*acc{}
	var userOrder []string
	for i := range r.Jobs {
		j := &r.Jobs[i]
		jct[i], wait[i] = j.JCT(), j.Wait()
		s.TotalJCT += jct[i]
		s.AvgWait += wait[i]
		first, last = math.Min(first, j.Submit), math.Max(last, j.End)
		busy += float64(j.GPUs) * j.RunTime
		slow := jct[i] / math.Max(j.RunTime, 1)
		s.AvgSlowdown += slow
		e := math.Abs(j.Predicted - j.Reference)
		absErr += e
		if e <= 0.25*j.Reference {
			within++
		}
		s.Preemptions += int(j.Preemptions)
		if j.Preemptions > 0 {
			s.PreemptedJobs++
			s.MostPreemptions = max(s.MostPreemptions, int(j.Preemptions))
			s.LostGPUHours += float64(j.GPUs) * j.Lost / 3600
		}
		u := r.User(i)
		a := users[u]
		if a == nil {
			a = &acc{}
			users[u] = a
			userOrder = append(userOrder, u)
		}
		a.sum += slow
		a.n++
	}
	fn := float64(n)
	s.AvgJCT = s.TotalJCT / fn
	s.AvgWait /= fn
	s.AvgSlowdown /= fn
	s.PredMAE = absErr / fn
	s.PredWithin25 = float64(within) / fn
	slices.Sort(jct)
	slices.Sort(wait)
	s.P50JCT, s.P95JCT, s.P99JCT = Quantile(jct, 0.5), Quantile(jct, 0.95), Quantile(jct, 0.99)
	s.P99Wait = Quantile(wait, 0.99)
	s.Makespan = last - first
	if s.Makespan > 0 && r.GPUs > 0 {
		s.Utilization = busy / (float64(r.GPUs) * s.Makespan)
	}
	if lb > 0 {
		s.RatioToLB = s.TotalJCT / lb
	}
	var sum, sq float64
	for _, u := range userOrder {
		m := users[u].sum / float64(users[u].n)
		sum += m
		sq += m * m
	}
	if sq > 0 {
		s.Fairness = sum * sum / (float64(len(userOrder)) * sq)
	}
	return s
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of sorted values, by linear
// interpolation between closest ranks; NaN for no values.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (sorted[hi]-sorted[lo])*(pos-float64(lo))
}
