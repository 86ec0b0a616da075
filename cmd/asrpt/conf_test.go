package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/slurmconf"
	"github.com/asrpt/asrpt/topo"
)

func clusterDir(name string) string {
	return filepath.Join("..", "..", "slurmconf", "testdata", "clusters", name)
}

func TestConfCommand(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		stdout   []string
		stderr   string
	}{
		{"check lab", []string{"conf", "check", "--dir", clusterDir("lab")}, 0,
			[]string{"4 nodes, 16 GPUs (tesla×16), 1 partitions", "0 errors, 0 warnings"}, ""},
		{"check dgx with bandwidth", []string{"conf", "check", "--dir", clusterDir("dgx"), "--bandwidth", filepath.Join(clusterDir("dgx"), "bandwidth.toml")}, 0,
			[]string{"16 nodes, 128 GPUs (a100×128), 2 partitions, 3 switches in 2 levels"}, ""},
		{"check bad gres", []string{"conf", "check", "--dir", clusterDir("bad-gres")}, 1,
			[]string{"slurm.conf:4: Gres: node g1: Gres has 8 GPUs but gres.conf gives 4", "gres.conf:4: Count: Count=2 but File= names 4 devices", "9 errors, 2 warnings"},
			"configuration has errors"},
		{"check missing dir", []string{"conf", "check", "--dir", filepath.Join(os.TempDir(), "no-such-asrpt-dir")}, 1,
			[]string{"slurm.conf: open"}, "1 errors"},
		{"show text", []string{"conf", "show", "--dir", clusterDir("tree")}, 0,
			[]string{"n[001-008]", "switch leaf0", "core         level 2", "main         n[001-032] (32 nodes, 128 GPUs) tier 0 default"}, ""},
		{"no subcommand", []string{"conf"}, 2, nil, "want a subcommand"},
		{"unknown subcommand", []string{"conf", "fix"}, 2, nil, "unknown subcommand"},
		{"stray argument", []string{"conf", "check", "x"}, 2, nil, "unexpected argument"},
		{"missing topo file", []string{"conf", "check", "--dir", clusterDir("lab"), "--topo", "/nonexistent.json"}, 1, nil, "--topo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, stdout.String(), stderr.String())
			}
			for _, s := range tc.stdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr.String())
			}
		})
	}
}

func TestConfShowJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"conf", "show", "--json", "--dir", clusterDir("mixed")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var m slurmconf.Model
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Nodes) != 10 || m.Nodes[0].Name != "a100-01" || m.Nodes[0].GPUType != "a100" || m.Nodes[9].GPUs != 4 {
		t.Errorf("nodes: %+v", m.Nodes)
	}
	if len(m.Partitions) != 3 || m.Partitions[1].Name != "small" || !m.Partitions[1].Default || m.TotalGPUs != 40 {
		t.Errorf("partitions: %+v total %d", m.Partitions, m.TotalGPUs)
	}
	// The keys the issue names are present in the raw JSON.
	for _, k := range []string{`"name"`, `"gpus"`, `"gpu_type"`, `"switch"`, `"partitions"`, `"switches"`} {
		if !bytes.Contains(stdout.Bytes(), []byte(k)) {
			t.Errorf("JSON lacks %s", k)
		}
	}
}

func fakeTopology(node string) *topo.Topology {
	return &topo.Topology{
		Version: topo.Version, Node: node, Driver: "550.54.15",
		GPUs: []topo.GPU{
			{Index: 0, Minor: 0, UUID: "GPU-0", PCIBusID: "0000:07:00.0", Model: "NVIDIA A100-SXM4-40GB", CPUAffinity: "0-7", NVLinks: 12, SwitchLinks: 12},
			{Index: 1, Minor: 1, UUID: "GPU-1", PCIBusID: "0000:0f:00.0", Model: "NVIDIA A100-SXM4-40GB", CPUAffinity: "0-7", NVLinks: 12, SwitchLinks: 12},
			{Index: 2, Minor: 2, UUID: "GPU-2", PCIBusID: "0000:47:00.0", Model: "NVIDIA A100-SXM4-40GB", CPUAffinity: "8-15", NVLinks: 12, SwitchLinks: 12},
			{Index: 3, Minor: 3, UUID: "GPU-3", PCIBusID: "0000:4e:00.0", Model: "NVIDIA A100-SXM4-40GB", CPUAffinity: "8-15", NVLinks: 12, SwitchLinks: 12},
		},
		Links: [][]int{{-1, 12, 12, 12}, {12, -1, 12, 12}, {12, 12, -1, 12}, {12, 12, 12, -1}},
		PCIe: [][]string{{"X", "PIX", "SYS", "SYS"}, {"PIX", "X", "SYS", "SYS"},
			{"SYS", "SYS", "X", "PIX"}, {"SYS", "SYS", "PIX", "X"}},
	}
}

// TestTopoCommand drives `asrpt topo` with a fake probe, writes the JSON
// file and feeds it back to `asrpt conf show --topo`.
func TestTopoCommand(t *testing.T) {
	saved := probeTopology
	t.Cleanup(func() { probeTopology = saved })
	probeTopology = func(node string) (*topo.Topology, error) { return fakeTopology(node), nil }

	out := filepath.Join(t.TempDir(), "node2.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"topo", "--node", "node2", "--type", "tesla", "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, s := range []string{"node node2, 4 GPUs", "NV12", "PIX",
		"NodeName=node2 Name=gpu Type=tesla File=/dev/nvidia3 Cores=8-15 Links=12,12,12,-1"} {
		if !strings.Contains(stdout.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, stdout.String())
		}
	}
	stdout.Reset()
	if code := run([]string{"conf", "show", "--json", "--dir", clusterDir("lab"), "--topo", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("conf show --topo: exit %d: %s", code, stderr.String())
	}
	var m slurmconf.Model
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m.Nodes[1].Name != "node2" || len(m.Nodes[1].Links) != 4 || m.Nodes[1].Links[0][3] != 12 || m.Nodes[0].Links != nil {
		t.Errorf("links from the topo file: %+v", m.Nodes[:2])
	}

	stdout.Reset()
	if code := run([]string{"topo", "--node", "x", "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--json: exit %d", code)
	}
	if _, err := topo.ReadJSON(&stdout, "stdout"); err != nil {
		t.Errorf("--json output does not read back: %v", err)
	}
}

func TestTopoCommandProbeError(t *testing.T) {
	saved := probeTopology
	t.Cleanup(func() { probeTopology = saved })
	savedSMI := runSMI
	t.Cleanup(func() { runSMI = savedSMI })
	runSMI = func(context.Context, ...string) ([]byte, error) { return nil, topo.ErrNoSMI }
	// Without NVML built in, the nvidia-smi fallback reports why it failed.
	for probeErr, want := range map[error]error{topo.ErrNoLibrary: topo.ErrNoLibrary, topo.ErrNotBuilt: topo.ErrNoSMI} {
		probeTopology = func(string) (*topo.Topology, error) { return nil, probeErr }
		var stdout, stderr bytes.Buffer
		if code := run([]string{"topo", "--node", "x"}, &stdout, &stderr); code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		if !strings.Contains(stderr.String(), want.Error()) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
	// The real probe on this machine: without a driver (or without cgo) it
	// must fail with one of the two clear errors, never panic.
	probeTopology = saved
	if _, err := probeTopology("x"); err != nil && !errors.Is(err, topo.ErrNoLibrary) && !errors.Is(err, topo.ErrNotBuilt) {
		t.Logf("probe on this machine: %v", err)
	}
}

// TestTopoWithoutCgo: a binary without NVML asks nvidia-smi, and prints
// the same report from its answers.
func TestTopoWithoutCgo(t *testing.T) {
	savedProbe, savedSMI := probeTopology, runSMI
	t.Cleanup(func() { probeTopology, runSMI = savedProbe, savedSMI })
	probeTopology = func(string) (*topo.Topology, error) { return nil, topo.ErrNotBuilt }
	runSMI = func(_ context.Context, args ...string) ([]byte, error) {
		file := "nvswitch8-topo.txt"
		if strings.HasPrefix(args[0], "--query-gpu=") {
			file = "nvswitch8-query.csv"
		}
		return os.ReadFile(filepath.Join("..", "..", "topo", "testdata", "smi", file))
	}
	var out, errb bytes.Buffer
	if rc := run([]string{"topo", "--node", "gpu07", "--json"}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	top, err := topo.ReadJSON(&out, "topo --json")
	if err != nil || top.Node != "gpu07" || len(top.GPUs) != 8 || top.Links[1][6] != 12 {
		t.Fatalf("%v %+v", err, top)
	}
	runSMI = func(context.Context, ...string) ([]byte, error) { return nil, topo.ErrNoSMI }
	errb.Reset()
	if rc := run([]string{"topo"}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "nvidia-smi not found") {
		t.Errorf("without nvidia-smi: rc %d: %s", rc, errb.String())
	}
}
