package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/BurntSushi/toml"

	"github.com/asrpt/asrpt/internal/tomlbound"
)

// Range is the recorded range of one figure: its bounds, either of which
// may be absent, and where they come from.
type Range struct {
	// Key names the figure (Figure.Key).
	Key string `toml:"key"`
	// Min and Max bound the figure, inclusive, in its unit; nil is no
	// bound on that side.
	Min *float64 `toml:"min"`
	Max *float64 `toml:"max"`
	// Why says where the bounds come from: a target of the project, or a
	// measured spread with its margin.
	Why string `toml:"why"`
}

// rangesFile is the layout of ranges.toml: a list of [[range]] tables.
type rangesFile struct {
	Range []Range `toml:"range"`
}

// LoadRanges reads a ranges file (TOML, read through tomlbound). Every
// range must name a figure, say why, have at least one bound, and have
// min ≤ max; keys are unique. Errors name the file and the key.
func LoadRanges(path string) ([]Range, error) {
	data, err := tomlbound.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ranges: %w", err)
	}
	if line, err := tomlbound.Check(data); err != nil {
		return nil, fmt.Errorf("ranges %s:%d: %w", path, line, err)
	}
	var f rangesFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, fmt.Errorf("ranges %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("ranges %s: unknown key %q", path, und[0].String())
	}
	seen := make(map[string]bool, len(f.Range))
	for i, r := range f.Range {
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("ranges %s: range %d: %w", path, i+1, err)
		}
		if seen[r.Key] {
			return nil, fmt.Errorf("ranges %s: %q listed twice", path, r.Key)
		}
		seen[r.Key] = true
	}
	return f.Range, nil
}

// validate checks one range on its own.
func (r Range) validate() error {
	switch {
	case r.Key == "":
		return errors.New("no key")
	case r.Why == "":
		return fmt.Errorf("%q: no why (where the bounds come from)", r.Key)
	case r.Min == nil && r.Max == nil:
		return fmt.Errorf("%q: neither min nor max", r.Key)
	case r.Min != nil && !finite(*r.Min), r.Max != nil && !finite(*r.Max):
		return fmt.Errorf("%q: a bound that is not a finite number", r.Key)
	case r.Min != nil && r.Max != nil && *r.Min > *r.Max:
		return fmt.Errorf("%q: min %g above max %g", r.Key, *r.Min, *r.Max)
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Check statuses.
const (
	StatusOK      = "ok"      // within the range
	StatusLow     = "low"     // below min
	StatusHigh    = "high"    // above max
	StatusFailed  = "failed"  // the run that measures it failed
	StatusMissing = "missing" // a range without a figure in this run
)

// Check is the verdict on one figure that has a range.
type Check struct {
	Key    string   `json:"key"`
	Value  float64  `json:"value"`
	Min    *float64 `json:"min,omitempty"`
	Max    *float64 `json:"max,omitempty"`
	Status string   `json:"status"`
	// Failed is the figure's Failed: why its run failed.
	Failed string `json:"failed,omitempty"`
}

// Pass reports whether the figure is within its range.
func (c Check) Pass() bool { return c.Status == StatusOK }

// Message says what is wrong with the figure, naming it, its value and
// its range ("replay asrpt forest/1000000: wall s = 31.2, range ≤ 20:
// above"); empty when it passes.
func (c Check) Message() string {
	switch c.Status {
	case StatusOK:
		return ""
	case StatusMissing:
		return fmt.Sprintf("%s: not measured, range %s", c.Key, rangeText(c.Min, c.Max, c.Key))
	case StatusFailed:
		return fmt.Sprintf("%s: run failed (%s), range %s", c.Key, c.Failed, rangeText(c.Min, c.Max, c.Key))
	case StatusLow:
		return fmt.Sprintf("%s = %s, range %s: below", c.Key, formatValue(c.Value, c.Key), rangeText(c.Min, c.Max, c.Key))
	default:
		return fmt.Sprintf("%s = %s, range %s: above", c.Key, formatValue(c.Value, c.Key), rangeText(c.Min, c.Max, c.Key))
	}
}

// CheckRanges checks every figure that has a range, in the ranges' order.
// A range whose figure was not measured is StatusMissing; a failed
// figure is StatusFailed. Figures without a range are not checked.
func CheckRanges(figs []Figure, ranges []Range) []Check {
	byKey := make(map[string]Figure, len(figs))
	for _, f := range figs {
		byKey[f.Key()] = f
	}
	out := make([]Check, 0, len(ranges))
	for _, r := range ranges {
		c := Check{Key: r.Key, Min: r.Min, Max: r.Max}
		f, ok := byKey[r.Key]
		switch {
		case !ok:
			c.Status = StatusMissing
		case f.Failed != "":
			c.Value, c.Status, c.Failed = f.Value, StatusFailed, f.Failed
		case r.Min != nil && f.Value < *r.Min:
			c.Value, c.Status = f.Value, StatusLow
		case r.Max != nil && f.Value > *r.Max:
			c.Value, c.Status = f.Value, StatusHigh
		default:
			c.Value, c.Status = f.Value, StatusOK
		}
		out = append(out, c)
	}
	return out
}
