package hostlist

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
)

func TestExpand(t *testing.T) {
	tests := []struct {
		in   string
		want string // space-separated
		err  string
	}{
		{in: "", want: ""},
		{in: "node1", want: "node1"},
		{in: "gpu[01-08,10]", want: "gpu01 gpu02 gpu03 gpu04 gpu05 gpu06 gpu07 gpu08 gpu10"},
		{in: "n[8-11]", want: "n8 n9 n10 n11"},
		{in: "n[08-11]", want: "n08 n09 n10 n11"},
		{in: "n[001-3]", want: "n001 n002 n003"},
		{in: "n[1-3,05]", want: "n1 n2 n3 n05"},
		{in: "rack[1-2]-node[01-02]", want: "rack1-node01 rack1-node02 rack2-node01 rack2-node02"},
		{in: "gpu[1-2]-ib", want: "gpu1-ib gpu2-ib"},
		{in: "a[1-2]b[3]c", want: "a1b3c a2b3c"},
		{in: "login,gpu[1-2] cpu1\tcpu2", want: "login gpu1 gpu2 cpu1 cpu2"},
		{in: "a,,b,", want: "a b"},
		{in: "[1-3]", want: "1 2 3"},
		{in: "n[1-2],n1", want: "n1 n2 n1"},
		{in: "n[3-1]", err: "invalid range"},
		{in: "n[1-]", err: "invalid range"},
		{in: "n[a-b]", err: "invalid range"},
		{in: "n[-1]", err: "invalid range"},
		{in: "n[]", err: "empty brackets"},
		{in: "n[1-2", err: "missing ']'"},
		{in: "n]1", err: "unbalanced"},
		{in: "n[1[2]]", err: "nested"},
		{in: "node[0-999999999]", err: "too many hosts"},
		{in: "a[0-999]b[0-999]", err: "too many hosts"},
		{in: "n[0-65535]", want: ""}, // exactly MaxHosts: allowed (checked by count below)
		{in: "n[99999999999999999999]", err: "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Expand(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.in == "n[0-65535]" {
				if len(got) != MaxHosts {
					t.Fatalf("%d hosts", len(got))
				}
				return
			}
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("got %q, want %q", s, tc.want)
			}
		})
	}
	if _, err := Expand("n[0-65535],x"); !errors.Is(err, ErrTooManyHosts) {
		t.Errorf("MaxHosts+1 names: err = %v", err)
	}
}

func TestCompress(t *testing.T) {
	tests := []struct {
		in   string // space-separated
		want string
	}{
		{"", ""},
		{"gpu01 gpu02 gpu03 gpu05", "gpu[01-03,05]"},
		{"n3 n1 n2 n2", "n[1-3]"},
		{"n9 n10 n11", "n[9-11]"},
		{"n08 n09 n10", "n[08-10]"},
		{"n1 n01", "n[1,01]"},
		{"login gpu1 gpu2", "gpu[1-2],login"},
		{"r1-ib r2-ib r3-ib", "r[1-3]-ib"},
		{"a1b1 a1b2 a2b1", "a1b[1-2],a2b1"},
		{"node7", "node7"},
		{"007 008", "[007-008]"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got := Compress(strings.Fields(tc.in))
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func sortedSet(hosts []string) []string {
	m := map[string]bool{}
	for _, h := range hosts {
		m[h] = true
	}
	out := make([]string, 0, len(m))
	for h := range m {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// FuzzHostlist checks that expansion never panics, respects MaxHosts, and
// that compressing an expansion expands back to the same set of names.
func FuzzHostlist(f *testing.F) {
	for _, s := range []string{"gpu[01-08,10]", "n[9-11]", "rack[1-2]-node[01-02]", "a,b,c[1-3]x",
		"node[0-999999999]", "n[1,01,001]", "n[0-3]", "[1-3]", "x1y2z3", "a[]", "n[1-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbound.Within(t, time.Second, func() {
			hosts, err := Expand(s)
			if err != nil {
				return
			}
			if len(hosts) > MaxHosts {
				t.Fatalf("%d hosts > MaxHosts", len(hosts))
			}
			c := Compress(hosts)
			back, err := Expand(c)
			if err != nil {
				t.Fatalf("compressed %q of %q does not expand: %v", c, s, err)
			}
			if a, b := sortedSet(hosts), sortedSet(back); !reflect.DeepEqual(a, b) {
				t.Fatalf("round trip of %q via %q: %v != %v", s, c, a, b)
			}
		})
	})
}

func BenchmarkExpand(b *testing.B) {
	for _, expr := range []string{"gpu[0001-4096]", "rack[01-64]-node[01-64]", "n[1-8],n[10-20],n[30-40,50-60,70-80]"} {
		b.Run(expr, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Expand(expr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCompress(b *testing.B) {
	hosts := make([]string, 0, 4096)
	for i := 1; i <= 4096; i++ {
		if i%17 != 0 {
			hosts = append(hosts, fmt.Sprintf("gpu%04d", i))
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		Compress(hosts)
	}
}
