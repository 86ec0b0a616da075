// Package slurmtime reads Slurm's duration syntax, as slurm.conf, sacct and
// the --time option write it.
package slurmtime

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Parse reads Slurm's time syntax: "M", "M:S", "H:M:S",
// "D-H", "D-H:M", "D-H:M:S", with an optional fraction on the seconds.
// A bare number is minutes (as for --time) when bareMinutes, else seconds.
// "UNLIMITED" gives unlimited = true.
func Parse(v string, bareMinutes bool) (secs float64, unlimited bool, err error) {
	if strings.EqualFold(v, "UNLIMITED") || strings.EqualFold(v, "INFINITE") {
		return 0, true, nil
	}
	bad := fmt.Errorf("%q is not a Slurm duration ([D-]HH:MM:SS)", v)
	days := 0.0
	rest := v
	hasDays := false
	if i := strings.IndexByte(v, '-'); i >= 0 {
		d, err := strconv.ParseUint(v[:i], 10, 32)
		if err != nil {
			return 0, false, bad
		}
		days, rest, hasDays = float64(d), v[i+1:], true
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return 0, false, bad
	}
	nums := make([]float64, len(parts))
	for i, p := range parts {
		if p == "" {
			return 0, false, bad
		}
		if i == len(parts)-1 && strings.IndexByte(p, '.') >= 0 {
			x, err := strconv.ParseFloat(p, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				return 0, false, bad
			}
			nums[i] = x
			continue
		}
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return 0, false, bad
		}
		nums[i] = float64(n)
	}
	var h, m, s float64
	switch {
	case hasDays && len(parts) == 1:
		h = nums[0]
	case hasDays && len(parts) == 2:
		h, m = nums[0], nums[1]
	case len(parts) == 3:
		h, m, s = nums[0], nums[1], nums[2]
	case len(parts) == 2:
		m, s = nums[0], nums[1]
	case bareMinutes:
		m = nums[0]
	default:
		s = nums[0]
	}
	return days*86400 + h*3600 + m*60 + s, false, nil
}
