package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// MaxShare is the largest share ReadShares takes: Slurm keeps shares in 32
// bits.
const MaxShare = 1<<32 - 1

// maxSharesLine bounds one line of a shares file: 1 MiB.
const maxSharesLine = 1 << 20

// ReadSharesFile is ReadShares on a file.
func ReadSharesFile(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadShares(f, path)
}

// ReadShares reads the accounts' shares from the output of `sacctmgr show
// assoc -P` (or -p): lines of fields separated by '|', the first non-empty
// one a header naming them. It takes the columns Account, User and Share
// (also named Fairshare), and ParentName (also "Par Name") when there is
// one; the others are ignored, and so are the rows of users (a non-empty
// User), but for their number of fields. Each account's row gives its share: a number in [0, MaxShare], or
// "parent", for an account that shares its parent's. Such an account
// takes its parent account's share when the ParentName column names one
// with a row, and Slurm's default share, 1, otherwise. An account listed
// twice (two clusters, two partitions) must have the same share in both
// rows; its first row's parent counts. The shares are normalized over the accounts listed: the result
// maps each account to its share of their sum; the hierarchy of accounts
// is not followed beyond "parent". name names the input in errors, which
// say the line and the field.
func ReadShares(r io.Reader, name string) (map[string]float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxSharesLine)
	type row struct {
		line   int
		share  float64 // < 0: "parent"
		parent string
	}
	rows := map[string]row{}
	var order []string // accounts in file order
	cols := map[string]int{}
	var header []string
	trailing := false
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		if header == nil {
			trailing = strings.HasSuffix(text, "|")
			header = strings.Split(strings.TrimSuffix(text, "|"), "|")
			for i, h := range header {
				key := columnKey(h)
				if _, dup := cols[key]; dup {
					return nil, fmt.Errorf("%s:%d: column %q twice", name, line, strings.TrimSpace(h))
				}
				cols[key] = i
			}
			for _, want := range []string{"account", "user", "share"} {
				if _, ok := cols[want]; !ok {
					return nil, fmt.Errorf("%s:%d: no column %s in the header (want the output of sacctmgr show assoc -P)", name, line, columnTitle[want])
				}
			}
			continue
		}
		if trailing {
			text = strings.TrimSuffix(text, "|")
		}
		fields := strings.Split(text, "|")
		if len(fields) != len(header) {
			return nil, fmt.Errorf("%s:%d: %d fields, the header has %d", name, line, len(fields), len(header))
		}
		get := func(col string) string { return strings.TrimSpace(fields[cols[col]]) }
		account, user := get("account"), get("user")
		if account == "" {
			return nil, fmt.Errorf("%s:%d: field Account: empty", name, line)
		}
		if user != "" {
			continue
		}
		share, err := parseShare(get("share"))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: field %s: %w", name, line, strings.TrimSpace(header[cols["share"]]), err)
		}
		var parent string
		if _, ok := cols["parentname"]; ok {
			parent = get("parentname")
		}
		if prev, ok := rows[account]; ok {
			if prev.share != share {
				return nil, fmt.Errorf("%s:%d: field %s: account %s has share %s here and %s at line %d (keep one cluster: sacctmgr show assoc -P cluster=NAME)",
					name, line, strings.TrimSpace(header[cols["share"]]), account, shareText(share), shareText(prev.share), prev.line)
			}
			continue
		}
		rows[account] = row{line: line, share: share, parent: parent}
		order = append(order, account)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: line longer than %d bytes", name, line+1, maxSharesLine)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if header == nil {
		return nil, fmt.Errorf("%s: empty (want the output of sacctmgr show assoc -P)", name)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%s: no account's row (a row with an empty User)", name)
	}
	shares := make(map[string]float64, len(order))
	var total float64
	for _, account := range order {
		// Follow "parent" up the accounts listed; a loop, or a parent not
		// listed, ends at the default share.
		r, s := rows[account], 1.0
		for range len(order) {
			if r.share >= 0 {
				s = r.share
				break
			}
			next, ok := rows[r.parent]
			if !ok {
				break
			}
			r = next
		}
		shares[account] = s
		total += s
	}
	if total == 0 {
		return nil, fmt.Errorf("%s: every account's share is 0", name)
	}
	for a := range shares {
		shares[a] /= total
	}
	return shares, nil
}

// columnKey is a header's column name as ReadShares matches it: lower
// case, without spaces, with the other names of its columns mapped to one.
func columnKey(h string) string {
	k := strings.ToLower(strings.ReplaceAll(h, " ", ""))
	switch k {
	case "fairshare", "shares":
		return "share"
	case "parname":
		return "parentname"
	}
	return k
}

// columnTitle names the columns ReadShares needs as sacctmgr titles them.
var columnTitle = map[string]string{"account": "Account", "user": "User", "share": "Share"}

// parseShare reads a Share field: a number in [0, MaxShare], or "parent"
// (returned as -1).
func parseShare(s string) (float64, error) {
	if strings.EqualFold(s, "parent") {
		return -1, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 0 && v <= MaxShare) {
		return 0, fmt.Errorf("%q: want a number in [0, %d] or \"parent\"", s, MaxShare)
	}
	return v, nil
}

func shareText(v float64) string {
	if v < 0 {
		return "parent"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
