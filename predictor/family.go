package predictor

import "strings"

// Name normalisation rules (documented in README.md, "Job-name families"):
//
//  1. lower-case;
//  2. remove UUIDs, dates and timestamps (2024-11-01, 20241101, 2024_11_01T10:30:00, 10:30:00);
//  3. split into tokens at any character that is not a letter or a digit;
//  4. drop tokens that are all digits (array indices, counters, ports),
//     hex hashes (≥ 7 hex characters with at least one digit and one letter, or
//     ≥ 12 hex digits), and run counters (run3, trial12, seed42, rep2, attempt1,
//     try4, iter5, job17, step100, epoch3, part2, shard1, idx4, no7, r2 — a
//     counter word followed by digits);
//  5. join the remaining tokens with "-".
//
// Tokens that mix letters and digits in other ways (resnet50, gpt2, bs64) are
// kept: they usually name a model or a shape, which changes the run time.
//
// Rule 2 is written as hand-made matchers (matchUUID, matchDate,
// matchClock) rather than regular expressions: replays compute a family
// for every job. Each matcher matches exactly what the regular expression
// in its comment matches, preferring alternatives as Go's regexp does
// (leftmost-first); TestFamilyMatchesRegexp and FuzzFamily check that
// against the expressions themselves.

// Family returns the normalised name family of a job name, so that runs of
// the same job share it: Family("train-bert-2024-11-01-run3") ==
// Family("train-bert-2024-11-02-run7") == "train-bert". The empty name, and a
// name made only of numbers, dates and hashes, give "".
func Family(name string) string {
	if name == "" {
		return ""
	}
	s := strings.ToLower(name)
	// Each pass reads the previous pass's output, as the regular
	// expressions did one after the other. Most names fit the stack.
	var b1, b2 [96]byte
	src, dst := append(b1[:0], s...), b2[:0]
	if strings.Count(s, "-") >= 4 {
		dst = replaceMatches(dst, src, matchUUID)
		src, dst = dst, src[:0]
	}
	if strings.Contains(s, "19") || strings.Contains(s, "20") {
		dst = replaceMatches(dst, src, matchDate)
		src, dst = dst, src[:0]
	}
	if strings.IndexByte(s, ':') >= 0 {
		dst = replaceMatches(dst, src, matchClock)
		src, dst = dst, src[:0]
	}
	// Rules 3 to 5: a byte that is ASCII but neither a lower-case letter
	// nor a digit separates tokens; any other byte (UTF-8 of a non-ASCII
	// letter) belongs to one.
	out := dst
	for i := 0; i < len(src); {
		if !isTokenByte(src[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(src) && isTokenByte(src[j]) {
			j++
		}
		if tok := src[i:j]; !dropToken(string(tok)) {
			if len(out) > 0 {
				out = append(out, '-')
			}
			out = append(out, tok...)
		}
		i = j
	}
	if string(out) == name {
		return name // no allocation for a name that is its own family
	}
	return string(out)
}

func isTokenByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80 }

// replaceMatches appends src to dst with every match of m replaced by one
// space, matches taken leftmost first and not overlapping, as
// regexp.ReplaceAllString(src, " ") does. m(src, i) returns the length of
// the match that starts at i, 0 for none; it may look at src[i-1].
func replaceMatches(dst, src []byte, m func(s []byte, i int) int) []byte {
	for i := 0; i < len(src); {
		if n := m(src, i); n > 0 {
			dst = append(dst, ' ')
			i += n
			continue
		}
		dst = append(dst, src[i])
		i++
	}
	return dst
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

// at returns s[i], or 0 (which no matcher accepts) past the end.
func at(s []byte, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// matchUUID matches [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}.
func matchUUID(s []byte, i int) int {
	const n = 36
	if len(s)-i < n {
		return 0
	}
	for k, c := range s[i : i+n] {
		if k == 8 || k == 13 || k == 18 || k == 23 {
			if c != '-' {
				return 0
			}
		} else if !isHex(c) {
			return 0
		}
	}
	return n
}

// matchDate matches a date with an optional time of day: 2024-11-01,
// 2024_11_01, 20241101, 2024-11-01t10:30:00, 20241101-103000; that is
//
//	(19|20)\d\d[-_./]?[01]\d[-_./]?[0-3]\d([t_\- ]?[0-2]\d[:\-_.]?[0-5]\d([:\-_.]?[0-5]\d)?)?
//
// Each optional separator is followed by a digit, which no separator is,
// so there is one way to match and the optional groups are taken whenever
// they match (greedy, and nothing follows them).
func matchDate(s []byte, i int) int {
	if !(at(s, i) == '1' && at(s, i+1) == '9' || at(s, i) == '2' && at(s, i+1) == '0') ||
		!isDigit(at(s, i+2)) || !isDigit(at(s, i+3)) {
		return 0
	}
	p := i + 4
	p += sepIf(s, p, "-_./")
	if c := at(s, p); c != '0' && c != '1' || !isDigit(at(s, p+1)) {
		return 0
	}
	p += 2
	p += sepIf(s, p, "-_./")
	if c := at(s, p); c < '0' || c > '3' || !isDigit(at(s, p+1)) {
		return 0
	}
	p += 2
	// The time of day.
	q := p + sepIf(s, p, "t_- ")
	if c := at(s, q); c < '0' || c > '2' || !isDigit(at(s, q+1)) {
		return p - i
	}
	q += 2
	q += sepIf(s, q, ":-_.")
	if !isMinute(s, q) {
		return p - i
	}
	p = q + 2
	// Seconds.
	q = p + sepIf(s, p, ":-_.")
	if isMinute(s, q) {
		p = q + 2
	}
	return p - i
}

// sepIf returns 1 when s[p] is one of seps, else 0.
func sepIf(s []byte, p int, seps string) int {
	if c := at(s, p); c != 0 && strings.IndexByte(seps, c) >= 0 {
		return 1
	}
	return 0
}

// isMinute reports whether s[p:p+2] matches [0-5]\d.
func isMinute(s []byte, p int) bool {
	c := at(s, p)
	return c >= '0' && c <= '5' && isDigit(at(s, p+1))
}

// isWordByte is regexp's \w for the byte before or after a \b: an ASCII
// letter, digit or '_' (any byte of a non-ASCII character is not).
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// matchClock matches a bare time of day, \b[0-2]?\d:[0-5]\d(:[0-5]\d)?\b,
// trying the alternatives in the regular expression's order of
// preference: with the leading [0-2], then without; with the seconds,
// then without.
func matchClock(s []byte, i int) int {
	if i > 0 && isWordByte(s[i-1]) || !isDigit(at(s, i)) {
		return 0 // no \b before a digit
	}
	boundary := func(p int) bool { return p >= len(s) || !isWordByte(s[p]) }
	try := func(p int) int { // p: where \d:[0-5]\d starts
		if !isDigit(at(s, p)) || at(s, p+1) != ':' || !isMinute(s, p+2) {
			return 0
		}
		e := p + 4
		if at(s, e) == ':' && isMinute(s, e+1) && boundary(e+3) {
			return e + 3 - i
		}
		if boundary(e) {
			return e - i
		}
		return 0
	}
	if c := s[i]; c <= '2' {
		if n := try(i + 1); n > 0 {
			return n
		}
	}
	return try(i)
}

// dropToken reports whether a name token is a number, hash or run counter.
func dropToken(t string) bool {
	digits, letters, hex := 0, 0, 0
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c >= '0' && c <= '9':
			digits++
			hex++
		case c >= 'a' && c <= 'z':
			letters++
			if c <= 'f' {
				hex++
			}
		}
	}
	switch {
	case digits == len(t):
		return true
	case isCounter(t):
		return true
	case hex == len(t) && (len(t) >= 12 || len(t) >= 7 && digits > 0 && letters > 0):
		return true
	}
	return false
}

// isCounter reports whether t is a counter word followed by one or more
// digits and nothing else (run3, seed42). The counter words are letters
// only, so the word is what precedes t's trailing digits.
func isCounter(t string) bool {
	k := len(t)
	for k > 0 && t[k-1] >= '0' && t[k-1] <= '9' {
		k--
	}
	if k == len(t) {
		return false
	}
	switch t[:k] {
	case "run", "trial", "seed", "rep", "attempt", "try", "iter", "job", "step", "epoch", "part", "shard", "idx", "no", "r":
		return true
	}
	return false
}
