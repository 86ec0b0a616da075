package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// secondsFlag is a flag of seconds that also takes a duration as the
// configuration files write them ("90m", "24h", "30d"), so that one
// vocabulary serves both.
type secondsFlag struct {
	p *float64
	// zero accepts 0 (a setting that 0 turns off).
	zero bool
}

func (f secondsFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.p, 'g', -1, 64)
}

// maxFlagSeconds bounds a seconds flag: a hundred years.
const maxFlagSeconds = 100 * 365 * 86400

func (f secondsFlag) Set(s string) error {
	if f.zero {
		if v, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && v == 0 {
			*f.p = 0
			return nil
		}
	}
	v, err := parseSeconds(s)
	if err != nil {
		return err
	}
	*f.p = v
	return nil
}

// parseSeconds reads a number of seconds or a duration ("90m", "24h",
// "30d"); it must be finite, positive and at most a hundred years.
func parseSeconds(s string) (float64, error) {
	s = strings.TrimSpace(s)
	var v float64
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(d, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number of seconds or a duration (90m, 24h, 30d)", s)
		}
		v = n * 86400
	} else if n, err := strconv.ParseFloat(s, 64); err == nil {
		v = n
	} else if d, err := time.ParseDuration(s); err == nil {
		v = d.Seconds()
	} else {
		return 0, fmt.Errorf("%q is not a number of seconds or a duration (90m, 24h, 30d)", s)
	}
	if math.IsNaN(v) || !(v > 0) || v > maxFlagSeconds {
		return 0, fmt.Errorf("%q: want more than 0 and at most 100 years", s)
	}
	return v, nil
}
