package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/multifactor"
	"github.com/asrpt/asrpt/sidecar"
)

func TestPriorityWarnings(t *testing.T) {
	multi := func(fs, age, size, part, qos uint32) multifactor.Params {
		p := multifactor.Default()
		p.Type = "priority/multifactor"
		p.WeightFairshare, p.WeightAge, p.WeightJobSize, p.WeightPartition, p.WeightQOS = fs, age, size, part, qos
		return p
	}
	cases := []struct {
		name string
		mode sidecar.WriteMode
		max  uint32
		prio multifactor.Params
		want string // substring of the one warning; "" for none
	}{
		{"documented weights, default range", sidecar.WriteFactor, 10000, multi(10000, 1000, 1000, 1000, 0), ""},
		{"priority/basic ignores the factor", sidecar.WriteFactor, 10000, multifactor.Default(),
			"PriorityType=priority/basic ignores site factors"},
		{"weights all 0: the factor is the whole priority", sidecar.WriteFactor, 10000, multi(0, 0, 0, 0, 0),
			"the site factor is the whole priority"},
		{"too small to change the order", sidecar.WriteFactor, 1000, multi(100000, 10000, 0, 0, 0),
			"site_factor_max = 1000 is below a tenth of the PriorityWeight* sum (110000)"},
		{"a tenth of the sum is enough", sidecar.WriteFactor, 11000, multi(100000, 10000, 0, 0, 0), ""},
		{"so large fair share no longer counts", sidecar.WriteFactor, 100001, multi(10000, 1000, 0, 0, 0),
			"more than 10 times PriorityWeightFairshare (10000)"},
		{"ten times fair share is the limit", sidecar.WriteFactor, 100000, multi(10000, 1000, 0, 0, 0), ""},
		{"no fair share: against the sum", sidecar.WriteFactor, 30000, multi(0, 1000, 1000, 0, 0),
			"more than 10 times the PriorityWeight* sum (2000)"},
		{"priority mode switches fair share off", sidecar.WritePriority, 10000, multi(10000, 1000, 0, 0, 0),
			"takes the managed jobs out of priority/multifactor"},
		{"priority mode without fair share", sidecar.WritePriority, 10000, multi(0, 0, 0, 0, 0), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := sidecar.DefaultConfig()
			cfg.WriteMode, cfg.SiteFactorMax = c.mode, c.max
			ws := priorityWarnings(cfg, c.prio)
			if c.want == "" && len(ws) != 0 || c.want != "" && (len(ws) != 1 || !strings.Contains(ws[0], c.want)) {
				t.Errorf("warnings %q, want one with %q", ws, c.want)
			}
		})
	}
}

func TestSiteFactorSupport(t *testing.T) {
	const v = "Slurm 22.05.8 (REST API v0.0.38)"
	cases := []struct {
		name               string
		mode               sidecar.WriteMode
		supports, fallback bool
		want               string
		problem            bool
	}{
		{"factor mode on 24.11", sidecar.WriteFactor, true, false, "write mode: factor", false},
		{"factor mode on 22.05 refuses to start", sidecar.WriteFactor, false, false, "the sidecar will refuse to start", true},
		{"factor mode on 22.05 with the fallback", sidecar.WriteFactor, false, true, "writes priorities instead", false},
		{"priority mode on 22.05", sidecar.WritePriority, false, false, "write mode: priority", false},
	}
	for _, c := range cases {
		cfg := sidecar.DefaultConfig()
		cfg.WriteMode, cfg.PriorityFallback = c.mode, c.fallback
		line, problem := siteFactorSupport(cfg, c.supports, v)
		if !strings.Contains(line, c.want) || problem != c.problem || !c.supports && c.mode == sidecar.WriteFactor && !strings.Contains(line, v) {
			t.Errorf("%s: %q (problem %v)", c.name, line, problem)
		}
	}
}

// TestSidecarCheckSlurmConf: --check --slurm-conf DIR reads that slurm.conf
// and warns about its priority settings for the write mode.
func TestSidecarCheckSlurmConf(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm")
	os.MkdirAll(conf, 0o755)
	os.WriteFile(filepath.Join(conf, "slurm.conf"), []byte("ClusterName=t\nGresTypes=gpu\nNodeName=n[1-2] Gres=gpu:4 CPUs=8\n"+
		"PartitionName=gpu Nodes=n[1-2]\nPriorityType=priority/multifactor\nPriorityWeightFairshare=100000\nPriorityWeightAge=1000\n"), 0o644)
	os.WriteFile(filepath.Join(conf, "gres.conf"), []byte("NodeName=n[1-2] Name=gpu File=/dev/nvidia[0-3]\n"), 0o644)
	file := filepath.Join(dir, "asrpt.toml")
	os.WriteFile(file, []byte("[slurm]\nurl = \"unix:///run/s.sock\"\nconf_dir = \"/nonexistent\"\n[sidecar]\nsite_factor_max = 5000\nstate_file = \""+
		filepath.Join(dir, "state.json")+"\"\n"), 0o644)
	var out, errOut bytes.Buffer
	if code := run([]string{"sidecar", "--check", "--config", file, "--slurm-conf", conf}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d:\n%s%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"ok (2 nodes, 8 GPUs in " + conf, "warning: sidecar.site_factor_max = 5000 is below a tenth"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if code := run([]string{"sidecar", "--config", file, "--slurm-conf", conf}, &out, &errOut); code == 0 {
		t.Error("--slurm-conf without --check accepted")
	}
}
