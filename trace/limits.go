package trace

import (
	"fmt"
	"strconv"
)

// Limits on the values a trace row may carry. Every reader refuses a value
// outside them with a *ParseError wrapping ErrValue that names the file, the
// line, the field and the limit, so that what the simulator is handed is
// small enough that every later sum, product and difference of times stays
// exact to well under a second.
const (
	// MaxRunTime is the largest run time, and the largest time limit, a
	// row may carry: one year, 31,536,000 s (365 days). The public traces'
	// longest run is 60 days (Philly).
	MaxRunTime = 365 * 86400

	// MaxSubmit is the latest submit time (and, in sacct, start and end
	// time) a row may carry: 2200-01-01T00:00:00Z, 7,258,118,400 Unix
	// seconds. The earliest is 0 (1970-01-01T00:00:00Z). Traces with
	// relative times (0, 5, …) lie in the same window, which holds 230
	// years of offsets.
	MaxSubmit = 7258118400

	// MaxIterations is the largest iteration count of a profiled job:
	// 10^9 (the catalogue's α_min are tenths of a second, so this is
	// already decades of training).
	MaxIterations = 1e9
)

// fmtSeconds writes a number of seconds as the errors quote it.
func fmtSeconds(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// checkDuration returns an error wrapping ErrValue unless what (a run time
// or a time limit, in seconds, known to be finite) is at most MaxRunTime.
func checkDuration(what string, x float64) error {
	if x > MaxRunTime {
		return fmt.Errorf("%w: %s %s s, want at most %d s (MaxRunTime, one year)", ErrValue, what, fmtSeconds(x), MaxRunTime)
	}
	return nil
}

// checkTime returns an error wrapping ErrValue unless what (a submit, start
// or end time in Unix seconds) lies in 0..MaxSubmit. NaN is outside.
func checkTime(what string, t float64) error {
	if !(t >= 0 && t <= MaxSubmit) {
		return fmt.Errorf("%w: %s %s s, want 0..%d Unix seconds (1970-01-01 to 2200-01-01, MaxSubmit)", ErrValue, what, fmtSeconds(t), int64(MaxSubmit))
	}
	return nil
}

// checkIterations returns an error wrapping ErrValue unless n is at most
// MaxIterations.
func checkIterations(n float64) error {
	if n > MaxIterations {
		return fmt.Errorf("%w: %s iterations, want at most %g (MaxIterations)", ErrValue, fmtSeconds(n), float64(MaxIterations))
	}
	return nil
}
