package predictor

import (
	"fmt"
	"strings"
)

// Default is the predictor the replay, the quality suite and the sidecar
// use unless told otherwise: the (user, name, GPU count) window mean,
// ranked by its expected value (policy.RankFor). Measured on the quality
// suite it is never worse than the family median beyond a case's noise
// band, where every forest-based predictor is on some cases (README,
// "Which prediction asrpt ranks by"); the forest stays a candidate.
const Default = "mean-gpus"

// Names lists the predictors ByName knows.
func Names() []string {
	return []string{"oracle", "limit", "mean", "mean-gpus", "mean-gpus-running", "forest", "select"}
}

// ByName returns a new predictor: "oracle" (true run times), "limit" (the
// user's time limit), "mean" (running mean of the (user, name) group) or
// "mean-gpus" (the same by (user, name, GPU count) first, NewMeanByGPUs),
// "mean-gpus-running" (that, counting the running jobs it is told of,
// NewMeanByGPUsRunning),
// "forest" (the online random forest, NewForest(cfg)) or "select" (the
// forest with estimator selection per group, Config.Select). cfg matters
// only to the forest. mean, forest and select size an array task from the
// finished tasks of its array (WithArrays). An unknown name is an error
// listing the known ones.
func ByName(name string, cfg Config) (Predictor, error) {
	switch name {
	case "oracle":
		return Oracle{}, nil
	case "limit":
		return Limit{}, nil
	case "mean":
		return WithArrays(NewMean()), nil
	case "mean-gpus":
		return WithArrays(NewMeanByGPUs()), nil
	case "mean-gpus-running":
		return WithArrays(NewMeanByGPUsRunning()), nil
	case "forest", "select":
		cfg.Select = name == "select"
		f, err := NewForest(cfg)
		if err != nil {
			return nil, err
		}
		return WithArrays(f), nil
	}
	return nil, fmt.Errorf("predictor: unknown predictor %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Seeded reports whether the named predictor's estimates depend on the
// seed of Config.Train.Forest (forest and select); the others give the same
// estimates whatever the seed, so replays with several seeds repeat one.
func Seeded(name string) bool { return name == "forest" || name == "select" }

// Unwrap returns the predictor under every wrapper of p (WithArrays,
// Perturb), or p itself.
func Unwrap(p Predictor) Predictor {
	for {
		w, ok := p.(interface{ Unwrap() Predictor })
		if !ok {
			return p
		}
		p = w.Unwrap()
	}
}
