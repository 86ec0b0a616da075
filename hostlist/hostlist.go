// Package hostlist expands and compresses Slurm hostlist expressions
// ("gpu[01-08],cpu[1-4]") with Slurm's own rules and bounded work and memory.
package hostlist

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// MaxHosts is the largest number of names one hostlist expression may
// expand to. Slurm refuses a single bracket range of more than 64K hosts
// (MAX_RANGE in src/common/hostlist.c); asrpt applies the same bound to the
// whole expression, so hostile input such as "node[0-999999999]" is refused
// before anything is allocated for it.
const MaxHosts = 64 * 1024

// maxHostnameLen bounds one expanded name, so that memory stays bounded even
// for long prefixes (Slurm truncates names at its own buffer sizes).
const maxHostnameLen = 1024

// ErrTooManyHosts is returned (wrapped) when an expression would expand to
// more than its limit of names (MaxHosts, or the caller's in ExpandLimit).
var ErrTooManyHosts = errors.New("hostlist expands to too many hosts")

// Expand expands a Slurm hostlist expression into host names, in the
// order Slurm produces them. Duplicates are kept.
//
// The syntax is Slurm's (src/common/hostlist.c): names are separated by
// commas, spaces or tabs outside brackets; "prefix[ranges]suffix" expands
// each comma-separated range "lo-hi" or "n" of the brackets; the width of lo
// as written (leading zeros included) is the zero-padded width of every
// number of that range ("gpu[08-10]" is gpu08 gpu09 gpu10); several bracket
// groups in one name expand as a cartesian product, leftmost group slowest
// ("r[1-2]n[1-2]" is r1n1 r1n2 r2n1 r2n2). An empty expression expands to
// no names.
//
// It fails on a malformed range (lo > hi, a non-digit, an unbalanced
// bracket) and, with ErrTooManyHosts, when the result would exceed MaxHosts.
func Expand(expr string) ([]string, error) {
	return ExpandLimit(expr, MaxHosts, fmt.Sprintf("limit %d", MaxHosts))
}

// ExpandLimit is Expand producing at most limit (≤ MaxHosts) names; note
// says which limit in errors ("limit 65536"), for callers that keep a
// budget over several expressions.
func ExpandLimit(expr string, limit int, note string) ([]string, error) {
	var out []string
	for _, tok := range split(expr) {
		names, err := expandToken(tok, limit-len(out), note)
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
	}
	return out, nil
}

// split splits expr at commas, spaces and tabs that are not inside
// brackets, dropping empty tokens.
func split(expr string) []string {
	var toks []string
	depth, start := 0, 0
	for i := 0; i < len(expr); i++ {
		switch expr[i] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case ',', ' ', '\t':
			if depth == 0 {
				if i > start {
					toks = append(toks, expr[start:i])
				}
				start = i + 1
			}
		}
	}
	if start < len(expr) {
		toks = append(toks, expr[start:])
	}
	return toks
}

// numRange is one "lo-hi" of a bracket group; width is the zero-padded
// output width (the length of lo as written).
type numRange struct {
	lo, hi uint64
	width  int
}

// bracketGroup is one "[...]" of a token, with the literal text before it.
type bracketGroup struct {
	lit    string
	ranges []numRange
	count  uint64
}

// expandToken expands one name that may hold bracket groups, producing at
// most limit names; note names the limit in errors.
func expandToken(tok string, limit int, note string) ([]string, error) {
	var groups []bracketGroup
	rest := tok
	total := uint64(1)
	for {
		open := strings.IndexByte(rest, '[')
		if open < 0 {
			if strings.IndexByte(rest, ']') >= 0 {
				return nil, fmt.Errorf("hostlist %q: unbalanced ']'", tok)
			}
			break
		}
		closeIdx := strings.IndexByte(rest[open:], ']')
		if closeIdx < 0 {
			return nil, fmt.Errorf("hostlist %q: missing ']'", tok)
		}
		closeIdx += open
		lit := rest[:open]
		if strings.IndexByte(lit, ']') >= 0 {
			return nil, fmt.Errorf("hostlist %q: unbalanced ']'", tok)
		}
		inner := rest[open+1 : closeIdx]
		if strings.IndexByte(inner, '[') >= 0 {
			return nil, fmt.Errorf("hostlist %q: nested '['", tok)
		}
		g, err := parseRanges(inner)
		if err != nil {
			return nil, fmt.Errorf("hostlist %q: %w", tok, err)
		}
		g.lit = lit
		groups = append(groups, g)
		total *= g.count
		if total > uint64(max(limit, 0)) {
			return nil, fmt.Errorf("hostlist %q: %w (%s)", tok, ErrTooManyHosts, note)
		}
		rest = rest[closeIdx+1:]
	}
	suffix := rest
	if len(groups) == 0 {
		if limit < 1 {
			return nil, fmt.Errorf("hostlist %q: %w (%s)", tok, ErrTooManyHosts, note)
		}
		return []string{tok}, nil
	}
	// Bound the name length so the output stays bounded in memory.
	nameLen := len(suffix)
	for _, g := range groups {
		nameLen += len(g.lit)
		w := 0
		for _, r := range g.ranges {
			w = max(w, r.width, len(strconv.FormatUint(r.hi, 10)))
		}
		nameLen += w
	}
	if nameLen > maxHostnameLen {
		return nil, fmt.Errorf("hostlist %q: names longer than %d bytes", tok, maxHostnameLen)
	}
	out := make([]string, 0, total)
	var b []byte
	var rec func(i int)
	rec = func(i int) {
		if i == len(groups) {
			out = append(out, string(append(b, suffix...)))
			return
		}
		g := groups[i]
		mark := len(b)
		for _, r := range g.ranges {
			for n := r.lo; ; n++ {
				b = append(b[:mark], g.lit...)
				b = appendPadded(b, n, r.width)
				rec(i + 1)
				if n == r.hi {
					break
				}
			}
		}
		b = b[:mark]
	}
	rec(0)
	return out, nil
}

// appendPadded appends n in decimal, zero-padded to width.
func appendPadded(b []byte, n uint64, width int) []byte {
	var tmp [20]byte
	d := strconv.AppendUint(tmp[:0], n, 10)
	for i := len(d); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// parseRanges parses the inside of one bracket group: "1-3,07,10-12".
func parseRanges(s string) (bracketGroup, error) {
	var g bracketGroup
	if s == "" {
		return g, errors.New("empty brackets")
	}
	for _, part := range strings.Split(s, ",") {
		r, err := parseRange(part)
		if err != nil {
			return g, err
		}
		g.ranges = append(g.ranges, r)
		g.count += r.hi - r.lo + 1
		if g.count > MaxHosts {
			return g, fmt.Errorf("%w (limit %d)", ErrTooManyHosts, MaxHosts)
		}
	}
	return g, nil
}

// parseRange parses "lo-hi" or "n". Like Slurm, the width is the length of
// lo as written.
func parseRange(s string) (numRange, error) {
	loS, hiS, isRange := strings.Cut(s, "-")
	if !isDigits(loS) || (isRange && !isDigits(hiS)) {
		return numRange{}, fmt.Errorf("invalid range %q", s)
	}
	if len(loS) > 18 || len(hiS) > 18 {
		return numRange{}, fmt.Errorf("range %q: number too large", s)
	}
	lo, _ := strconv.ParseUint(loS, 10, 64)
	hi := lo
	if isRange {
		hi, _ = strconv.ParseUint(hiS, 10, 64)
	}
	if lo > hi {
		return numRange{}, fmt.Errorf("invalid range %q: %d > %d", s, lo, hi)
	}
	if hi-lo+1 > MaxHosts {
		return numRange{}, fmt.Errorf("range %q: %w (limit %d)", s, ErrTooManyHosts, MaxHosts)
	}
	return numRange{lo: lo, hi: hi, width: len(loS)}, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// hostName is a name split at its last run of digits.
type hostName struct {
	prefix, suffix string
	digits         string // "" when the name has no digits
	num            uint64
}

func splitHostName(h string) hostName {
	end := len(h)
	for end > 0 && !isDigit(h[end-1]) {
		end--
	}
	start := end
	for start > 0 && isDigit(h[start-1]) {
		start--
	}
	// Names whose number would not fit are kept whole.
	if start == end || end-start > 18 || strings.ContainsAny(h, "[],") {
		return hostName{prefix: h}
	}
	n, _ := strconv.ParseUint(h[start:end], 10, 64)
	return hostName{prefix: h[:start], suffix: h[end:], digits: h[start:end], num: n}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// fits reports whether formatting num zero-padded to width gives digits.
func fits(num uint64, width int, digits string) bool {
	return string(appendPadded(nil, num, width)) == digits
}

// Compress returns a Slurm hostlist expression for hosts, sorted and
// without duplicates: names that differ only in their last number are
// grouped as "prefix[ranges]suffix" ("gpu01 gpu02 gpu03 gpu05" is
// "gpu[01-03,05]"). Zero padding is preserved per range, so
// ExpandHostlist(CompressHostlist(h)) is h as a set.
func Compress(hosts []string) string {
	type key struct{ prefix, suffix string }
	groups := make(map[key][]hostName)
	var plain []string
	seen := make(map[string]bool, len(hosts))
	for _, h := range hosts {
		if h == "" || seen[h] {
			continue
		}
		seen[h] = true
		hn := splitHostName(h)
		if hn.digits == "" {
			plain = append(plain, h)
			continue
		}
		k := key{hn.prefix, hn.suffix}
		groups[k] = append(groups[k], hn)
	}
	keys := make([]key, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].prefix != keys[j].prefix {
			return keys[i].prefix < keys[j].prefix
		}
		return keys[i].suffix < keys[j].suffix
	})
	type item struct {
		sortKey string
		text    string
	}
	var items []item
	sort.Strings(plain)
	for _, p := range plain {
		items = append(items, item{p, p})
	}
	for _, k := range keys {
		hs := groups[k]
		sort.Slice(hs, func(i, j int) bool {
			if hs[i].num != hs[j].num {
				return hs[i].num < hs[j].num
			}
			return len(hs[i].digits) < len(hs[j].digits)
		})
		var parts []string
		count := 0
		// Greedy runs of consecutive numbers that share a padding width;
		// a name with a different padding of an already seen number
		// starts its own run.
		used := make([]bool, len(hs))
		for i := range hs {
			if used[i] {
				continue
			}
			used[i] = true
			width := len(hs[i].digits)
			lo, hi := hs[i].num, hs[i].num
			loDigits := hs[i].digits
			for j := i + 1; j < len(hs); j++ {
				if used[j] {
					continue
				}
				if hs[j].num == hi {
					continue // same number, other padding
				}
				if hs[j].num != hi+1 || !fits(hs[j].num, width, hs[j].digits) {
					if hs[j].num > hi+1 {
						break
					}
					continue
				}
				used[j] = true
				hi = hs[j].num
			}
			count += int(hi - lo + 1)
			if lo == hi {
				parts = append(parts, loDigits)
			} else {
				parts = append(parts, loDigits+"-"+string(appendPadded(nil, hi, width)))
			}
		}
		var text string
		if count == 1 {
			text = k.prefix + parts[0] + k.suffix
		} else {
			text = k.prefix + "[" + strings.Join(parts, ",") + "]" + k.suffix
		}
		items = append(items, item{k.prefix + "\x00" + k.suffix, text})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].sortKey < items[j].sortKey })
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.text
	}
	return strings.Join(out, ",")
}
