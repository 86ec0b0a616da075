package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/report"
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

// TestReplayFairness replays three jobs on one 4-GPU node through fifo:
// 1 (ann, phys, 4 GPUs, 100 s) at 0, 2 (cat, chem, 4 GPUs, 50 s) at 1 and
// 3 (bob, phys, 2 GPUs, 10 s) at 2. Job 2 runs in [100, 150], job 3 in
// [150, 160]; jobs wait in [1, 150), when job 1 gets 4×99 GPU-seconds and
// job 2 4×50. The shares file gives phys 1 and chem 3.
func TestReplayFairness(t *testing.T) {
	p := writeTrace(t, header+"1,0,ann,a,phys,p,4,1,100,600,COMPLETED\n2,1,cat,b,chem,p,4,1,50,600,COMPLETED\n"+
		"3,2,bob,c,phys,p,2,1,10,600,COMPLETED\n")
	shares := filepath.Join(t.TempDir(), "assoc.txt")
	if err := os.WriteFile(shares, []byte("Cluster|Account|User|Share\nc|root||1\nc|phys||1\nc|phys|ann|parent\nc|chem||3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"replay", "--trace", p, "--nodes", "1", "--gpus-per-node", "4", "--policies", "fifo",
		"--predictor", "mean", "--progress", "never", "--shares", shares, "--longest", "2", "--top-users", "1"}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"target shares from " + shares, "fairness of fifo: the 2 accounts with the most GPU-hours, of 2",
		"fairness of fifo: the 1 users with the most GPU-hours, of 3", "fairness of fifo: the 2 longest waits"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, stdout.String())
		}
	}
	stdout.Reset()
	if code := run(append(args, "--json"), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var rep struct {
		SharesFile string `json:"shares_file"`
		Policies   []struct {
			Fairness report.FairnessReport `json:"fairness"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || len(rep.Policies) != 1 {
		t.Fatalf("JSON: %v\n%s", err, stdout.String())
	}
	f := rep.Policies[0].Fairness
	phys, _ := f.Account("phys")
	chem, _ := f.Account("chem")
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if rep.SharesFile != shares || f.Targets != report.TargetsShares || !near(f.ContendedSeconds, 149) ||
		!near(phys.ContendedShare, 396.0/596) || !near(chem.ContendedShare, 200.0/596) ||
		!near(phys.TargetShare, 0.25) || !near(chem.TargetShare, 0.75) || f.MaxWait != 148 || len(f.Users) != 3 {
		t.Errorf("fairness %+v", f)
	}
	if len(f.Longest) != 2 || f.Longest[0].ID != "3" || f.Longest[0].Wait != 148 || f.Longest[1].ID != "2" || f.Longest[1].Wait != 99 {
		t.Errorf("longest %+v", f.Longest)
	}

	// A bad shares file: the error names the file, the line and the field.
	if err := os.WriteFile(shares, []byte("Account|User|Share\nphys||1\nchem||many\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run(args, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), shares+`:3: field Share: "many"`) {
		t.Errorf("bad shares: exit %d, stderr %q", code, stderr.String())
	}
	// Shares of other accounts only: a warning, every target 0.
	if err := os.WriteFile(shares, []byte("Account|User|Share\nbio||1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run(args, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "no account of the workload has a share") {
		t.Errorf("foreign shares: exit %d, stderr %q", code, stderr.String())
	}
}

// TestReplayWhy: --why tells one job's story under each policy, in the
// table and in the JSON; a job that is not in the replay is refused.
func TestReplayWhy(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"replay", "--jobs", "300", "--nodes", "2", "--gpus-per-node", "8", "--load", "1.3",
		"--policies", "fifo,asrpt", "--predictor", "mean", "--progress", "never", "--why", "150"}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"why job 150 waited", "fifo:", "asrpt:", "submitted", "started", "finished"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	stdout.Reset()
	if code := run(append(args, "--json"), &stdout, &stderr); code != 0 {
		t.Fatalf("--json: exit %d: %s", code, stderr.String())
	}
	var rep struct {
		WhyJob   string `json:"why_job"`
		Policies []struct {
			Why []struct {
				Event string `json:"event"`
			} `json:"why"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.WhyJob != "150" || len(rep.Policies) != 2 {
		t.Fatalf("why_job %q, %d policies", rep.WhyJob, len(rep.Policies))
	}
	for i, p := range rep.Policies {
		if n := len(p.Why); n < 3 || p.Why[0].Event != "submitted" || p.Why[n-1].Event != "finished" {
			t.Errorf("policy %d: story %+v, want submitted … finished", i, p.Why)
		}
	}
	stderr.Reset()
	if code := run([]string{"replay", "--jobs", "50", "--policies", "fifo", "--progress", "never", "--why", "no-such-job"}, &stdout, &stderr); code == 0 ||
		!strings.Contains(stderr.String(), "no-such-job") {
		t.Errorf("unknown job: exit %d, %s", code, stderr.String())
	}
}

// TestReplayAgainst: every policy is compared job by job with the baseline
// (multifactor when it is replayed; another named by --against is replayed
// even when not listed); the baseline itself carries no comparison; none
// turns it off; a policy that does not exist is a usage error.
func TestReplayAgainst(t *testing.T) {
	type pol struct {
		Policy string          `json:"policy"`
		Paired json.RawMessage `json:"paired"`
	}
	var rep struct {
		Against  string `json:"against"`
		Policies []pol  `json:"policies"`
	}
	args := []string{"replay", "--jobs", "300", "--nodes", "2", "--gpus-per-node", "8", "--load", "1.3",
		"--predictor", "mean", "--progress", "never", "--json"}
	var stdout, stderr bytes.Buffer
	if code := run(append(args, "--policies", "fifo,asrpt", "--against", "multifactor"), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Against != "multifactor" || len(rep.Policies) != 3 || rep.Policies[2].Policy != "multifactor" {
		t.Fatalf("against %q, policies %+v: want fifo, asrpt and multifactor added", rep.Against, rep.Policies)
	}
	for _, p := range rep.Policies {
		if (p.Paired != nil) != (p.Policy != "multifactor") {
			t.Errorf("policy %s: paired %s", p.Policy, p.Paired)
		}
	}
	// multifactor replayed: the default baseline; not replayed: none.
	for _, c := range []struct {
		policies, against string
		n                 int
	}{{"multifactor,asrpt", "multifactor", 2}, {"fifo,asrpt", "", 2}} {
		stdout.Reset()
		rep.Against, rep.Policies = "", nil
		if code := run(append(args, "--policies", c.policies), &stdout, &stderr); code != 0 {
			t.Fatalf("--policies %s: exit %d: %s", c.policies, code, stderr.String())
		}
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Against != c.against || len(rep.Policies) != c.n {
			t.Errorf("--policies %s: against %q, %d policies (%v); want %q, %d", c.policies, rep.Against, len(rep.Policies), err, c.against, c.n)
		}
	}
	stdout.Reset()
	if code := run(append(args, "--policies", "fifo,asrpt", "--against", "none"), &stdout, &stderr); code != 0 {
		t.Fatalf("--against none: exit %d: %s", code, stderr.String())
	}
	rep.Against, rep.Policies = "", nil
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Against != "" || len(rep.Policies) != 2 || rep.Policies[0].Paired != nil {
		t.Errorf("--against none: %v %+v", err, rep)
	}
	if code := run(append(args, "--policies", "fifo", "--against", "nope"), &stdout, &stderr); code != 2 {
		t.Errorf("--against nope: exit %d, want 2 (usage)", code)
	}
	// With --plots, the differences' CDF beside the other plots; none
	// without a baseline.
	for _, against := range []string{"multifactor", "none"} {
		dir := filepath.Join(t.TempDir(), "plots")
		if code := run(append(args, "--policies", "fifo,asrpt", "--against", against, "--plots", dir), &stdout, &stderr); code != 0 {
			t.Fatalf("--plots: exit %d: %s", code, stderr.String())
		}
		_, err := os.Stat(filepath.Join(dir, "jct-diff-cdf.svg"))
		if _, cdf := os.Stat(filepath.Join(dir, "jct-cdf.svg")); cdf != nil || (err == nil) != (against != "none") {
			t.Errorf("--against %s --plots: jct-diff-cdf.svg %v, jct-cdf.svg %v", against, err, cdf)
		}
	}
}

// TestReplaySidecarConfig: --sidecar-config runs the closed loop with the
// site's sidecar configuration (here its interval: a sidecar polling every
// 2 minutes runs fewer cycles than the default's 30 s), and a bad file is
// refused with its name and line.
func TestReplaySidecarConfig(t *testing.T) {
	dir := t.TempDir()
	base, err := os.ReadFile(filepath.Join("..", "..", "contrib", "asrpt.toml"))
	if err != nil {
		t.Fatal(err)
	}
	slow := filepath.Join(dir, "slow.toml")
	if err := os.WriteFile(slow, bytes.Replace(base, []byte(`interval = "30s"`), []byte(`interval = "2m"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	cycles := func(args ...string) float64 {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args = append([]string{"replay", "--jobs", "200", "--nodes", "4", "--policies", "asrpt-sidecar", "--against", "none", "--json"}, args...)
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		var rep struct {
			Policies []struct {
				Loop *report.LoopFigures `json:"closed_loop"`
			} `json:"policies"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || len(rep.Policies) != 1 || rep.Policies[0].Loop == nil {
			t.Fatalf("%v: %v\n%s", args, err, stdout.String())
		}
		return float64(rep.Policies[0].Loop.Cycles)
	}
	if def, site := cycles(), cycles("--sidecar-config", slow); !(site < def) {
		t.Errorf("%v cycles with a 2-minute interval, %v with the default 30 s", site, def)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[sidecar]\ninterval = \"soon\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"replay", "--jobs", "50", "--policies", "asrpt-sidecar", "--sidecar-config", bad}, &stdout, &stderr); code == 0 ||
		!strings.Contains(stderr.String(), "bad.toml:2") {
		t.Errorf("a bad --sidecar-config: exit %d, %s", code, stderr.String())
	}
}
