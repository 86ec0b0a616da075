package sidecar

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestContribMetricNames: every asrpt_* metric the example alert rules and
// the Grafana dashboard in contrib/ query is one the sidecar exports
// (histograms by their _bucket, _sum and _count series).
func TestContribMetricNames(t *testing.T) {
	h := newHarness(t, 1, 4, false, nil)
	h.cycle(t0) // some vectors appear once a label is used
	mfs, err := h.s.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, mf := range mfs {
		have[mf.GetName()] = true
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			have[mf.GetName()+suffix] = true
		}
	}
	// Vectors without a sample yet are not gathered: list them from the
	// descriptions of the registry's collectors.
	for _, name := range metricNames(h.s) {
		have[name] = true
	}
	used := regexp.MustCompile(`asrpt_[a-z_]+`)
	for _, f := range []string{"asrpt-alerts.yml", "asrpt-grafana.json"} {
		b, err := os.ReadFile(filepath.Join("..", "contrib", f))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range used.FindAllString(string(b), -1) {
			if strings.HasPrefix(m, "asrpt_") && !have[m] {
				t.Errorf("contrib/%s queries %s, which the sidecar does not export", f, m)
			}
			n++
		}
		if n < 5 {
			t.Errorf("contrib/%s names only %d metrics", f, n)
		}
	}
}

// metricNames returns the names of every asrpt_* metric of s, sampled or
// not, with the series names of a histogram.
func metricNames(s *Sidecar) []string {
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	var out []string
	for _, c := range s.m.own {
		ch := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			if m := fq.FindStringSubmatch(d.String()); m != nil {
				out = append(out, m[1], m[1]+"_bucket", m[1]+"_sum", m[1]+"_count")
			}
		}
	}
	return out
}
