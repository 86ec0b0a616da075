// Package prediction holds what the policies need to know of a run-time
// prediction, apart from the predictors that make it (package predictor):
// the two-number estimate and the limit assumed for a job without one.
package prediction

// Estimate is a predicted run time: two numbers, because ordering and
// fitting want different ones (design §5.4). Ranking uses the expected
// value (the SEPT / cμ rule); fitting a job into a backfill hole and
// building the free-GPU profile use the median.
type Estimate struct {
	// Seconds is the expected run time at the job's reference placement
	// (for profiled jobs: predicted iterations · α_min), in seconds, > 0.
	// The ordering policies rank by it.
	Seconds float64
	// Median is the predicted median run time at the reference placement,
	// seconds; 0 when the predictor has only one number, in which case
	// Fit returns Seconds.
	Median float64
	// Known is false when nothing like the job has been seen before; Seconds
	// then holds the predictor's fallback guess (nearest known group, then
	// the time limit).
	Known bool
	// Estimator names what gave the estimate (empty: not said).
	Estimator Estimator
}

// Estimator names what gave an estimate: the plan and the sidecar's state
// show it beside each prediction.
type Estimator string

// The estimators.
const (
	// ByForest: the random forest.
	ByForest Estimator = "forest"
	// ByGroup: the job's (user, family) group's own statistics, the
	// family median (predictor mean, or the forest's choice with select,
	// or before its first training).
	ByGroup Estimator = "group"
	// ByUser, ByPartition: an unseen job's fallback, the user's or the
	// partition's statistics.
	ByUser      Estimator = "user"
	ByPartition Estimator = "partition"
	// ByLimit: the job's time limit; ByDefault: DefaultLimit.
	ByLimit   Estimator = "limit"
	ByDefault Estimator = "default"
	// ByOracle: the true run time.
	ByOracle Estimator = "oracle"
	// ByClass: an unseen job sized by its GPU-count class (design §5.5).
	ByClass Estimator = "gpu_class"
	// ByArray: an array task sized by the finished tasks of its array.
	ByArray Estimator = "array"
)

// Valid reports whether e is one of the estimators above, or empty.
func (e Estimator) Valid() bool {
	switch e {
	case "", ByForest, ByGroup, ByUser, ByPartition, ByLimit, ByDefault, ByOracle, ByClass, ByArray:
		return true
	}
	return false
}

// Fit returns the run time in seconds to fit the job into a reservation
// hole with: the median when the predictor gave one, else Seconds.
func (e Estimate) Fit() float64 {
	if e.Median > 0 {
		return e.Median
	}
	return e.Seconds
}

// DefaultLimit is the run time in seconds assumed for a job that has no
// time limit and nothing like it in the history: one day.
const DefaultLimit = 86400
