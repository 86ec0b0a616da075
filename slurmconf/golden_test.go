package slurmconf

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/internal/golden"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/golden")

// render is the golden text of one configuration directory: the model as
// JSON and the problems, with the directory stripped from file names.
func render(t *testing.T, dir string) string {
	t.Helper()
	opt := Options{}
	if _, err := os.Stat(filepath.Join(dir, "bandwidth.toml")); err == nil {
		opt.BandwidthFile = filepath.Join(dir, "bandwidth.toml")
	}
	cfg, err := Load(dir, opt)
	if (err != nil) != (len(cfg.Problems.Errors()) > 0) {
		t.Fatalf("Load error %v disagrees with problems %v", err, cfg.Problems)
	}
	var b bytes.Buffer
	js, jerr := json.MarshalIndent(cfg.Model(), "", "  ")
	if jerr != nil {
		t.Fatal(jerr)
	}
	b.Write(js)
	b.WriteString("\n# problems\n")
	for _, p := range cfg.Problems {
		b.WriteString(strings.ReplaceAll(p.Error(), dir+string(filepath.Separator), ""))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestGolden loads every configuration under testdata/clusters and compares
// the model and problem list with testdata/golden/<name>.golden (rewrite
// with -update).
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "clusters", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no test clusters: %v", err)
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			got := render(t, dir)
			golden.Check(t, filepath.Join("testdata", "golden", name+".golden"), []byte(got), *update)
		})
	}
}

// TestGoldenExpectations states, independently of the golden files, the
// facts each test configuration exists to show, so that an -update cannot
// silently bless a wrong model.
func TestGoldenExpectations(t *testing.T) {
	load := func(t *testing.T, name string) *Config {
		t.Helper()
		dir := filepath.Join("testdata", "clusters", name)
		opt := Options{}
		if _, err := os.Stat(filepath.Join(dir, "bandwidth.toml")); err == nil {
			opt.BandwidthFile = filepath.Join(dir, "bandwidth.toml")
		}
		cfg, _ := Load(dir, opt)
		return cfg
	}
	t.Run("lab", func(t *testing.T) {
		cfg := load(t, "lab")
		if len(cfg.Problems) != 0 {
			t.Fatalf("problems on the lab config: %v", cfg.Problems)
		}
		cl := cfg.Cluster
		if len(cl.Nodes) != 4 || cl.TotalGPUs() != 16 || cl.Nodes[3].Name != "node4" || cl.Nodes[0].GPUType != "tesla" {
			t.Fatalf("lab cluster: %+v", cl.Nodes)
		}
		if cfg.Slurm.SchedulerType != "sched/backfill" || cfg.Slurm.PriorityType != "priority/multifactor" {
			t.Errorf("plugins: %q %q", cfg.Slurm.SchedulerType, cfg.Slurm.PriorityType)
		}
		if v, _ := cfg.Slurm.Setting("TaskPlugin"); v != "task/none" {
			t.Errorf("TaskPlugin with trailing comment = %q", v)
		}
		if len(cfg.Partitions) != 1 || len(cfg.Partitions[0].Nodes) != 4 || !cfg.Partitions[0].Default {
			t.Errorf("partitions: %+v", cfg.Partitions)
		}
	})
	t.Run("lab24", func(t *testing.T) {
		// The 24.11 lab as test/slurmlab/lab.sh writes it (no TaskPlugin,
		// sched/builtin, a cgroup.conf asrpt does not read).
		cfg := load(t, "lab24")
		if len(cfg.Problems) != 0 {
			t.Fatalf("problems on the 24.11 lab config: %v", cfg.Problems)
		}
		if cfg.Cluster.TotalGPUs() != 16 || cfg.Slurm.SchedulerType != "sched/builtin" || cfg.Slurm.ClusterName != "lab24" {
			t.Errorf("lab24: %+v", cfg.Slurm)
		}
	})
	t.Run("dgx", func(t *testing.T) {
		cfg := load(t, "dgx")
		if err := cfg.Problems.Err(); err != nil {
			t.Fatal(err)
		}
		cl := cfg.Cluster
		n := cl.Nodes[9]
		if n.Name != "dgx10" || n.GPUs != 8 || n.Switch != "leaf2" || len(n.Links) != 8 || n.Links[2][5] != 12 || n.Links[4][4] != -1 {
			t.Fatalf("dgx10: %+v", n)
		}
		if cl.Switches[2].Name != "spine" || cl.Switches[2].Level != 1 || cl.Switches[0].Parent != "spine" {
			t.Errorf("switches: %+v", cl.Switches)
		}
		if cl.Switches[0].LinkSpeed != 25e9 || cl.BW.Intra != 32e9 {
			t.Errorf("bandwidths: leaf %g intra %g", cl.Switches[0].LinkSpeed, cl.BW.Intra)
		}
		if sn := cfg.Slurm.Nodes[0]; sn.CPUs != 256 || sn.RealMemory != 1000000 || len(sn.Features) != 3 {
			t.Errorf("NodeName=DEFAULT not inherited: %+v", sn)
		}
		if cfg.Partitions[1].PriorityTier != 10 || len(cfg.Partitions[1].Nodes) != 2 {
			t.Errorf("debug partition: %+v", cfg.Partitions[1])
		}
	})
	t.Run("mixed", func(t *testing.T) {
		cfg := load(t, "mixed")
		if err := cfg.Problems.Err(); err != nil {
			t.Fatal(err)
		}
		cl := cfg.Cluster
		a, t4 := cl.Nodes[0], cl.Nodes[4]
		if a.GPUType != "a100" || a.Links == nil || a.Links[0][1] != 4 || a.Links[1][2] != 0 {
			t.Errorf("a100 node: %+v", a)
		}
		if t4.Name != "t4-01" || t4.GPUType != "t4" || t4.Links != nil || t4.IntraBW != 12e9 || t4.GPUs != 4 {
			t.Errorf("t4 node: %+v", t4)
		}
		if cfg.Slurm.Nodes[4].Weight != 10 || cfg.Slurm.Nodes[0].Weight != 1 || cfg.Slurm.Nodes[4].RealMemory != 192000 {
			t.Errorf("second NodeName=DEFAULT: %+v / %+v", cfg.Slurm.Nodes[0], cfg.Slurm.Nodes[4])
		}
		if cl.BW.NVLink != 100e9 || len(cl.Switches) != 0 {
			t.Errorf("bw %+v switches %v", cl.BW, cl.Switches)
		}
		if p := cfg.Partitions[0]; p.State != "UP" || p.PriorityTier != 2 {
			t.Errorf("PartitionName=DEFAULT not inherited: %+v", p)
		}
	})
	t.Run("tree", func(t *testing.T) {
		cfg := load(t, "tree")
		if err := cfg.Problems.Err(); err != nil {
			t.Fatal(err)
		}
		cl := cfg.Cluster
		levels := map[string]int{}
		for _, s := range cl.Switches {
			levels[s.Name] = s.Level
		}
		if levels["leaf3"] != 0 || levels["spine1"] != 1 || levels["core"] != 2 || cl.Nodes[31].Switch != "leaf3" {
			t.Errorf("tree: %+v", cl.Switches)
		}
		if cl.Switches[6].LinkSpeed != 50e9 {
			t.Errorf("core LinkSpeed=400 Gb/s = %g B/s", cl.Switches[6].LinkSpeed)
		}
	})
	t.Run("include", func(t *testing.T) {
		cfg := load(t, "include")
		if err := cfg.Problems.Err(); err != nil {
			t.Fatal(err)
		}
		cl := cfg.Cluster
		if len(cl.Nodes) != 8 || cl.Nodes[4].Name != "r2n1" || cl.Nodes[4].Switch != "rack2" || cfg.Slurm.SchedulerType != "sched/backfill" {
			t.Errorf("include: %+v", cl.Nodes)
		}
	})
	t.Run("bad-gres", func(t *testing.T) {
		cfg := load(t, "bad-gres")
		wantProblems(t, cfg.Problems,
			"slurm.conf:4: Gres: node g1: Gres has 8 GPUs but gres.conf gives 4",
			"slurm.conf:4: Gres: node g2: Gres has 8 GPUs but gres.conf gives 4",
			"gres.conf:4: Count: Count=2 but File= names 4 devices",
			"slurm.conf:6: Gres: node g4: Gres has 4 GPUs of type v100 but gres.conf gives 0 of that type",
			"slurm.conf:7: Gres: node g5: GRES \"nic\" is not listed in GresTypes",
			"gres.conf:8: Links: node g6: 3 entries for 2 GPUs",
			"gres.conf:9: Links: node g6: entry 1 (this device, by gres.conf order) is 0, want -1",
			"gres.conf:10: warning: NodeName: nosuch[1-2]: no such node in slurm.conf",
			"gres.conf:11: Name: missing",
			"slurm.conf:9: Nodes: partition p: nodes not in slurm.conf: g9",
		)
	})
	t.Run("bad-topology", func(t *testing.T) {
		cfg := load(t, "bad-topology")
		wantProblems(t, cfg.Problems,
			"topology.conf:2: Nodes: node n3 is already under switch s1",
			"topology.conf:2: Nodes: switch s2: nodes not in slurm.conf: x7",
			"topology.conf:3: Switches: switch top: child switch s9 is not defined",
			"topology.conf:4: Switches: switch s2 already has parent top",
			"topology.conf:5: SwitchName: switch s1 already defined at",
			"topology.conf:6: Nodes: hostlist \"n[6-1]\": invalid range",
			"topology.conf:7: Speed: unknown topology.conf key",
		)
	})
	t.Run("bad-syntax", func(t *testing.T) {
		cfg := load(t, "bad-syntax")
		wantProblems(t, cfg.Problems,
			"slurm.conf:3: warning: SelectType: unknown plugin \"select/magic\"",
			"slurm.conf:4: CPUs: \"many\": want an integer",
			"slurm.conf:4: Gres: GRES \"gpu:a100:x4\"",
			"slurm.conf:4: State: unknown node state \"SLEEPY\"",
			"slurm.conf:5: NodeName: hostlist \"b[0-99999999]\"",
			"slurm.conf:6: NodeName: hostlist \"c[1-2\": missing ']'",
			"slurm.conf:7: key Features: unterminated quote",
			"slurm.conf:7: warning: Color: unknown NodeName key",
			"slurm.conf:8: NodeName: node a2 already defined at",
			"slurm.conf:9: Gres: node e1: GRES \"shard\" is not listed in GresTypes",
			"slurm.conf:10: Default: \"maybe\": want YES or NO",
			"slurm.conf:10: PriorityTier: \"-3\": want an integer in 0..65533",
			"slurm.conf:10: Nodes: partition p: nodes not in slurm.conf: zz1",
			"slurm.conf:11: PartitionName: partition p already defined at",
			"slurm.conf:12: Include: open",
			"slurm.conf:13: cannot parse \"this line is not key value\"",
		)
	})
}

// wantProblems checks that each wanted text is a substring of one problem,
// and that there is no error problem that no wanted text accounts for.
func wantProblems(t *testing.T, ps Problems, want ...string) {
	t.Helper()
	used := make([]bool, len(ps))
	for _, w := range want {
		found := false
		for i, p := range ps {
			if strings.Contains(p.Error(), w) {
				used[i], found = true, true
			}
		}
		if !found {
			t.Errorf("no problem contains %q", w)
		}
	}
	for i, p := range ps {
		if !used[i] && !p.Warning {
			t.Errorf("unexpected problem: %v", p)
		}
	}
}
