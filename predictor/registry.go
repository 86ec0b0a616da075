package predictor

import (
	"fmt"
	"strings"
)

// Names lists the predictors ByName knows.
func Names() []string { return []string{"oracle", "limit", "mean", "forest", "select"} }

// ByName returns a new predictor: "oracle" (true run times), "limit" (the
// user's time limit), "mean" (running mean of the (user, name) group) or
// "forest" (the online random forest, NewForest(cfg)) or "select" (the
// forest with estimator selection per group, Config.Select). cfg matters
// only to the forest. An unknown name is an error listing the known ones.
func ByName(name string, cfg Config) (Predictor, error) {
	switch name {
	case "oracle":
		return Oracle{}, nil
	case "limit":
		return Limit{}, nil
	case "mean":
		return NewMean(), nil
	case "forest":
		return NewForest(cfg)
	case "select":
		cfg.Select = true
		return NewForest(cfg)
	}
	return nil, fmt.Errorf("predictor: unknown predictor %q (known: %s)", name, strings.Join(Names(), ", "))
}
