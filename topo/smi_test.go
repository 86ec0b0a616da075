package topo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
)

// fakeSMI answers as nvidia-smi would from the fixtures NAME-query.csv and
// NAME-topo.txt.
func fakeSMI(t *testing.T, name string) SMIRunner {
	return func(_ context.Context, args ...string) ([]byte, error) {
		file := name + "-topo.txt"
		if strings.HasPrefix(args[0], "--query-gpu=") {
			file = name + "-query.csv"
		}
		return os.ReadFile(filepath.Join("testdata", "smi", file))
	}
}

func TestProbeSMI(t *testing.T) {
	top, err := ProbeSMI(context.Background(), fakeSMI(t, "nvswitch8"), "gpu01")
	if err != nil {
		t.Fatal(err)
	}
	if len(top.GPUs) != 8 || top.Driver != "550.54.15" || top.GPUs[5].PCIBusID != "0000:57:00.0" || top.GPUs[0].Model != "NVIDIA A100-SXM4-80GB" {
		t.Errorf("GPUs %+v driver %q", top.GPUs, top.Driver)
	}
	if top.Links[0][7] != 12 || top.Links[3][3] != -1 || !top.HasNVLink() || top.GPUs[2].NVLinks != 12 {
		t.Errorf("links %v", top.Links)
	}
	if top.GPUs[6].CPUAffinity != "112-127,240-255" {
		t.Errorf("affinity %q", top.GPUs[6].CPUAffinity)
	}
	pcie, err := ProbeSMI(context.Background(), fakeSMI(t, "pcie4"), "gpu02")
	if err != nil {
		t.Fatal(err)
	}
	if pcie.HasNVLink() || pcie.PCIe[0][1] != PCIeSingle || pcie.PCIe[1][2] != PCIeSystem || pcie.PCIe[2][2] != PCIeSame || pcie.GPUs[3].MIG {
		t.Errorf("PCIe-only node: %v %v", pcie.Links, pcie.PCIe)
	}
}

func TestProbeSMIRefusesBadOutput(t *testing.T) {
	good, _ := os.ReadFile(filepath.Join("testdata", "smi", "pcie4-topo.txt"))
	query, _ := os.ReadFile(filepath.Join("testdata", "smi", "pcie4-query.csv"))
	for _, tc := range []struct {
		name, query, topo, want string
	}{
		{"no GPU", "", string(good), "no GPU"},
		{"short query line", "0, 0, GPU-x\n", string(good), "3 fields, want 7"},
		{"indices out of order", strings.Replace(string(query), "1, 1,", "5, 1,", 1), string(good), "index"},
		{"missing row", string(query), strings.Replace(string(good), "\nGPU3\t", "\nXPU3\t", 1), "3 GPU rows for 4 GPUs"},
		{"bad cell", string(query), strings.Replace(string(good), "PIX", "NVx", 1), "is not X, NV<n>"},
		{"self not X", string(query), strings.Replace(string(good), " X ", "PIX", 1), "GPU0–GPU0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(_ context.Context, args ...string) ([]byte, error) {
				if strings.HasPrefix(args[0], "--query-gpu=") {
					return []byte(tc.query), nil
				}
				return []byte(tc.topo), nil
			}
			if _, err := ProbeSMI(context.Background(), run, "n"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
	failing := func(context.Context, ...string) ([]byte, error) { return nil, ErrNoSMI }
	if _, err := ProbeSMI(context.Background(), failing, "n"); !errors.Is(err, ErrNoSMI) {
		t.Errorf("without nvidia-smi: %v", err)
	}
}

// FuzzParseSMITopo: any topo -m output gives a valid topology or an error.
func FuzzParseSMITopo(f *testing.F) {
	for _, name := range []string{"nvswitch8", "pcie4"} {
		b, _ := os.ReadFile(filepath.Join("testdata", "smi", name+"-topo.txt"))
		f.Add(b, 4)
	}
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		fuzzbound.Within(t, time.Second, func() {
			n = 1 + (n&0x7fffffff)%16
			top := &Topology{Version: Version, Node: "n", GPUs: make([]GPU, n)}
			for i := range top.GPUs {
				top.GPUs[i].Index = i
			}
			if err := parseSMITopo(b, top); err == nil {
				if err := top.Validate(); err != nil {
					t.Fatalf("accepted an invalid topology: %v", err)
				}
			}
		})
	})
}
