package main

import (
	"math"
	"strconv"
	"strings"
)

// unitOf returns the unit of the figure named key: what follows the last
// ": " (the figure's Col).
func unitOf(key string) string {
	if i := strings.LastIndex(key, ": "); i >= 0 {
		return key[i+2:]
	}
	return key
}

// formatValue prints a measured figure for the tables: a duration for
// ns/op ("43.0 µs", "25.3 s"), otherwise three significant digits with
// thousands separators ("1,320", "56,300", "0.220", "1.24", "53").
func formatValue(v float64, key string) string {
	return format(v, key, sig3)
}

// formatBound prints a range's bound as typed, in full ("4,096", "0.05",
// "1 ms", "30 s").
func formatBound(v float64, key string) string {
	return format(v, key, func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) })
}

// format prints v in the unit of the figure named key, its digits by
// digits.
func format(v float64, key string, digits func(float64) string) string {
	if unitOf(key) != "ns/op" {
		return formatNumber(v, digits)
	}
	switch a := math.Abs(v); {
	case a >= 1e9:
		return digits(v/1e9) + " s"
	case a >= 1e6:
		return digits(v/1e6) + " ms"
	case a >= 1e3:
		return digits(v/1e3) + " µs"
	default:
		return digits(v) + " ns"
	}
}

// formatNumber prints v's digits with thousands separators in the integer
// part; a whole number below 1000 as it is ("53", not "53.0").
func formatNumber(v float64, digits func(float64) string) string {
	s := digits(v)
	if v == math.Trunc(v) && math.Abs(v) < 1000 {
		s = strconv.FormatFloat(v, 'f', 0, 64)
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// sig3 rounds v to three significant digits and prints it without an
// exponent (1234567 → "1230000", 0.2204 → "0.220", 31.24 → "31.2").
func sig3(v float64) string {
	if v == 0 || !finite(v) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	exp := int(math.Floor(math.Log10(math.Abs(v))))
	decimals := max(0, 2-exp)
	scale := math.Pow(10, float64(exp-2))
	r := math.Round(v/scale) * scale
	// Rounding may carry into a new digit (999.6 → 1000): one decimal less.
	if math.Abs(r) >= math.Pow(10, float64(exp+1)) {
		decimals = max(0, decimals-1)
	}
	return strconv.FormatFloat(r, 'f', decimals, 64)
}

// rangeText prints a range: "≥ a", "≤ b" or "a – b", in the unit of the
// figure named key.
func rangeText(lo, hi *float64, key string) string {
	switch {
	case lo != nil && hi != nil:
		return formatBound(*lo, key) + " – " + formatBound(*hi, key)
	case lo != nil:
		return "≥ " + formatBound(*lo, key)
	case hi != nil:
		return "≤ " + formatBound(*hi, key)
	}
	return "—"
}
