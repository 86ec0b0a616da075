package slurmconf

import (
	"fmt"

	"github.com/asrpt/asrpt/hostlist"
)

// MaxHosts is hostlist.MaxHosts: the most names one hostlist expression
// may expand to.
const MaxHosts = hostlist.MaxHosts

// ErrTooManyHosts is hostlist.ErrTooManyHosts; also returned (wrapped) when
// a file's expressions expand to more than MaxConfigHosts names.
var ErrTooManyHosts = hostlist.ErrTooManyHosts

// ExpandHostlist is hostlist.Expand.
func ExpandHostlist(expr string) ([]string, error) { return hostlist.Expand(expr) }

// CompressHostlist is hostlist.Compress.
func CompressHostlist(hosts []string) string { return hostlist.Compress(hosts) }

// MaxConfigHosts is the most host names that the hostlist expressions of
// one configuration file, with the files it includes, may expand to in all:
// 262,144 names (4 × MaxHosts). Each name costs about 1 KB once the model is
// built, so a file stays below about 300 MB and a second of work however
// many hostlists it holds; past the limit every further expression is an
// error, found before anything is allocated for it. Slurm's largest
// clusters have a few tens of thousands of nodes.
const MaxConfigHosts = 4 * MaxHosts

// MaxPartitionMembers is the most node memberships all partitions of a
// configuration may have together, counting each partition's Nodes= names,
// and every node looked at to resolve ALL and each NodeSet: 1,048,576 (for
// example 16 partitions of 65,536 nodes, or 4 of all of MaxConfigHosts).
const MaxPartitionMembers = 4 * MaxConfigHosts

// hostBudget charges the names expanded from one configuration file
// against a total; the zero value is spent, newHostBudget gives one of
// MaxConfigHosts.
type hostBudget struct {
	left, total int
	what        string
}

func newHostBudget() *hostBudget {
	return &hostBudget{left: MaxConfigHosts, total: MaxConfigHosts, what: "names in all in one configuration file"}
}

// expand is ExpandHostlist within the budget: it fails with
// ErrTooManyHosts once the names of this and earlier expressions would
// pass the total, before expanding anything.
func (b *hostBudget) expand(expr string) ([]string, error) {
	limit, note := MaxHosts, fmt.Sprintf("limit %d", MaxHosts)
	if b.left < MaxHosts {
		limit, note = b.left, fmt.Sprintf("limit %d %s", b.total, b.what)
	}
	names, err := hostlist.ExpandLimit(expr, limit, note)
	b.left -= len(names)
	return names, err
}

// take charges n names that were not expanded from an expression (nodes
// added by Nodes=ALL) and reports whether they fit.
func (b *hostBudget) take(n int) bool {
	if n > b.left {
		b.left = 0
		return false
	}
	b.left -= n
	return true
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
