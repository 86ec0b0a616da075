package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTrace writes a native CSV trace into a temporary directory.
func writeTrace(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const header = "id,submit,user,name,account,partition,gpus,nodes,run_time,time_limit,state\n"

func TestReplayJSON(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	var stdout, stderr bytes.Buffer
	code := run([]string{"replay", "--jobs", "300", "--nodes", "4", "--gpus-per-node", "8",
		"--policies", "fifo,asrpt,asrpt-oracle,las", "--out", out, "--csv", out + ".csv",
		"--plots", filepath.Join(t.TempDir(), "plots")}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, p := range []string{"fifo", "asrpt", "asrpt-oracle", "las", "lower bound"} {
		if !strings.Contains(stdout.String(), p) {
			t.Errorf("table lacks %q:\n%s", p, stdout.String())
		}
	}
	var rep struct {
		Jobs       int     `json:"jobs"`
		LowerBound float64 `json:"lower_bound_total_jct_s"`
		Policies   []map[string]any
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Jobs != 300 || rep.LowerBound <= 0 || len(rep.Policies) != 4 {
		t.Fatalf("report: jobs %d, LB %v, %d policies", rep.Jobs, rep.LowerBound, len(rep.Policies))
	}
	for _, p := range rep.Policies {
		for _, k := range []string{"policy", "total_jct_s", "avg_jct_s", "p50_jct_s", "p95_jct_s", "p99_jct_s",
			"avg_wait_s", "p99_wait_s", "makespan_s", "utilization", "ratio_to_lb"} {
			if _, ok := p[k]; !ok {
				t.Errorf("policy %v lacks %s", p["policy"], k)
			}
		}
		if r := p["ratio_to_lb"].(float64); r < 1 {
			t.Errorf("policy %v below the lower bound: ratio %v", p["policy"], r)
		}
	}
	for _, f := range []string{out + ".csv"} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

func TestReplayBadInput(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		trace string
		code  int
		want  string
	}{
		{"malformed row", nil, header + "1,0,u,n,a,p,1,1,10,60,COMPLETED\n2,5,u,n,a,p,two,1,10,60,COMPLETED\n", 1, "trace.csv:3"},
		{"zero GPUs", nil, header + "1,0,u,n,a,p,0,1,10,60,COMPLETED\n", 1, "gpus"},
		{"negative run time", nil, header + "1,0,u,n,a,p,1,1,-5,60,COMPLETED\n", 1, "run_time"},
		{"empty trace", nil, header, 1, "empty"},
		{"unknown format", []string{"--format", "swf"}, header + "1,0,u,n,a,p,1,1,10,60,COMPLETED\n", 2, "swf"},
		{"unknown policy", []string{"--policies", "srpt"}, header + "1,0,u,n,a,p,1,1,10,60,COMPLETED\n", 2, "unknown policy"},
		{"all too large", nil, header + "1,0,u,n,a,p,64,1,10,60,COMPLETED\n", 1, "no job fits"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTrace(t, tc.trace)
			out := filepath.Join(t.TempDir(), "out.json")
			args := append([]string{"replay", "--trace", p, "--nodes", "2", "--gpus-per-node", "8", "--out", out}, tc.args...)
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, stderr.String(), tc.code, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output file exists after a failed run")
			}
			entries, _ := os.ReadDir(filepath.Dir(out))
			if len(entries) != 0 {
				t.Errorf("files left behind: %v", entries)
			}
		})
	}
}

// TestReplayExcludesTooLarge checks that jobs larger than the cluster are
// reported and left out while the rest is replayed.
func TestReplayExcludesTooLarge(t *testing.T) {
	p := writeTrace(t, header+"1,0,u,n,a,p,64,1,10,60,COMPLETED\n2,1,u,n,a,p,4,1,10,60,COMPLETED\n")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"replay", "--trace", p, "--nodes", "2", "--gpus-per-node", "8"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "1 jobs larger than the cluster") || !strings.Contains(stdout.String(), "excluded 1") {
		t.Errorf("exclusion not reported: stdout %q stderr %q", stdout.String(), stderr.String())
	}
}

// TestReplaySlurmConf takes the cluster from Slurm's own files: the lab's
// configuration has 4 nodes of 4 GPUs.
func TestReplaySlurmConf(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	var stdout, stderr bytes.Buffer
	code := run([]string{"replay", "--slurm-conf", "../../slurmconf/testdata/clusters/lab", "--jobs", "100",
		"--policies", "asrpt", "--out", out}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		GPUs int `json:"gpus"`
	}
	if err := json.Unmarshal(b, &rep); err != nil || rep.GPUs != 16 {
		t.Errorf("gpus %d (%v), want 16 from slurm.conf", rep.GPUs, err)
	}
	code = run([]string{"replay", "--slurm-conf", t.TempDir(), "--jobs", "10"}, &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "slurm.conf") {
		t.Errorf("missing slurm.conf: exit %d, stderr %q", code, stderr.String())
	}
}

// TestReplaySlurmConfPriority checks that --slurm-conf gives the
// multifactor model the site's weights: a site that weighs only fair share
// and one that weighs only age replay differently, and a weight Slurm
// would refuse is an error naming the file, line and key.
func TestReplaySlurmConfPriority(t *testing.T) {
	lab, err := os.ReadFile("../../slurmconf/testdata/clusters/lab/slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	gres, err := os.ReadFile("../../slurmconf/testdata/clusters/lab/gres.conf")
	if err != nil {
		t.Fatal(err)
	}
	conf := func(extra string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "slurm.conf"), append(append([]byte(nil), lab...), extra...), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "gres.conf"), gres, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	total := func(dir string) float64 {
		t.Helper()
		out := filepath.Join(t.TempDir(), "r.json")
		var stdout, stderr bytes.Buffer
		if code := run([]string{"replay", "--slurm-conf", dir, "--jobs", "400", "--load", "1.3",
			"--policies", "multifactor", "--progress", "never", "--out", out}, &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Policies []struct {
				TotalJCT float64 `json:"total_jct_s"`
			} `json:"policies"`
		}
		if err := json.Unmarshal(b, &rep); err != nil || len(rep.Policies) != 1 {
			t.Fatalf("report: %v (%d policies)", err, len(rep.Policies))
		}
		return rep.Policies[0].TotalJCT
	}
	fair := total(conf("PriorityWeightFairshare=10000\nPriorityWeightAge=0\nPriorityWeightJobSize=0\n"))
	age := total(conf("PriorityWeightFairshare=0\nPriorityWeightAge=10000\nPriorityWeightJobSize=0\n"))
	if fair == age {
		t.Errorf("fair-share-only and age-only sites replay alike (total JCT %v): the weights are not read", fair)
	}
	bad := conf("PriorityWeightAge=lots\n")
	var stdout, stderr bytes.Buffer
	code := run([]string{"replay", "--slurm-conf", bad, "--jobs", "10", "--policies", "multifactor"}, &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "PriorityWeightAge") || !strings.Contains(stderr.String(), "slurm.conf:") {
		t.Errorf("bad weight: exit %d, stderr %q", code, stderr.String())
	}
}
