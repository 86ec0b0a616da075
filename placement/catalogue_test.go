package placement

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/internal/fuzzbound"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// referenceCluster is the cluster catalogue.md's figures are computed on:
// 16 servers of 8 GPUs, every GPU pair NVLink/NVSwitch-connected (300 GB/s),
// 25 GB/s between servers, flat.
func referenceCluster() *cluster.Cluster {
	c := pcieCluster(16, 8)
	for i := range c.Nodes {
		c.Nodes[i].IntraBW = cluster.DefaultNVLink
	}
	return c
}

var catalogueGPUs = []int{1, 2, 4, 8, 16, 32, 64}

// TestCatalogueGolden renders every catalogue profile and its bounds on the
// reference cluster and compares with testdata/catalogue.golden (-update
// rewrites it).
func TestCatalogueGolden(t *testing.T) {
	pl := NewPlacer(referenceCluster())
	var b bytes.Buffer
	fmt.Fprintf(&b, "# model GPUs K d  c_k[ms] a_k[MB] m_k[MB]  α_min[ms] α_max[ms] ratio heavy(1.5)\n")
	for _, m := range Models() {
		for _, g := range catalogueGPUs {
			p, err := Lookup(m, g)
			if err != nil {
				fmt.Fprintf(&b, "%-12s %3d  error: %v\n", m, g, err)
				continue
			}
			s := p.Stages[0]
			amin, amax := pl.Bounds(p)
			fmt.Fprintf(&b, "%-12s %3d %d %3d %8.2f %7.2f %8.1f %9.2f %9.2f %5.3f %v\n",
				m, g, len(p.Stages), s.Replicas, s.Compute*1e3, s.Activation/1e6, s.Gradient/1e6,
				amin*1e3, amax*1e3, amax/amin, pl.CommHeavy(p, 1.5))
		}
	}
	path := filepath.Join("testdata", "catalogue.golden")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestCatalogueGolden -update)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("catalogue differs from %s (rerun with -update if intended):\n%s", path, b.String())
	}
}

func TestCatalogueCommHeavy(t *testing.T) {
	pl := NewPlacer(referenceCluster())
	heavyAt8 := []string{"bert-large", "gpt2-1.5b", "t5-large"}
	for _, m := range heavyAt8 {
		p, err := Lookup(m, 8)
		if err != nil {
			t.Fatal(err)
		}
		if amin, amax := pl.Bounds(p); !pl.CommHeavy(p, 1.5) {
			t.Errorf("%s on 8 GPUs: α_max/α_min = %.3f, want ≥ 1.5", m, amax/amin)
		}
	}
	for _, m := range []string{"resnet50", "vgg16", "inception-v3"} {
		for _, g := range catalogueGPUs {
			p, err := Lookup(m, g)
			if err != nil {
				t.Fatal(err)
			}
			if amin, amax := pl.Bounds(p); amax/amin >= 1.25 {
				t.Errorf("%s on %d GPUs: α_max/α_min = %.3f, want a CNN below 1.25", m, g, amax/amin)
			}
		}
	}
	// On PCIe-only servers (24 GB/s inside, 25 GB/s between) consolidation
	// buys nothing: no catalogue model is communication-heavy there.
	pcie := NewPlacer(pcieCluster(16, 8))
	for _, m := range Models() {
		for _, g := range catalogueGPUs {
			if p, err := Lookup(m, g); err == nil && pcie.CommHeavy(p, 1.5) {
				t.Errorf("%s on %d PCIe GPUs is communication-heavy", m, g)
			}
		}
	}
}

func TestLookup(t *testing.T) {
	if got := Models(); !slices.IsSorted(got) || len(got) != 6 {
		t.Fatalf("Models() = %v, want 6 sorted names", got)
	}
	for _, tc := range []struct {
		model   string
		gpus    int
		k, d    int
		wantErr string
	}{
		{"resnet50", 64, 1, 64, ""},
		{"ResNet50", 3, 1, 3, ""}, // case-insensitive
		{"bert-large", 8, 1, 8, ""},
		{"bert-large", 16, 2, 8, ""},
		{"bert-large", 64, 4, 16, ""}, // at most 4 stages
		{"gpt2-1.5b", 2, 2, 1, ""},    // model state needs 2 stages
		{"gpt2-1.5b", 8, 2, 4, ""},
		{"gpt2-1.5b", 64, 8, 8, ""},
		{"gpt2-1.5b", 24, 2, 12, ""}, // 24/8 = 3 → 2 stages
		{"t5-large", 12, 1, 12, ""},  // below 16 GPUs: no growth
		{"t5-large", 128, 8, 16, ""},
		{"gpt2-1.5b", 3, 0, 0, "multiple of 2"},
		{"vgg16", 0, 0, 0, "at least 1 GPU"},
		{"alexnet", 8, 0, 0, "known: bert-large, gpt2-1.5b, inception-v3, resnet50, t5-large, vgg16"},
	} {
		p, err := Lookup(tc.model, tc.gpus)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Lookup(%q, %d) error %v, want %q", tc.model, tc.gpus, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Lookup(%q, %d): %v", tc.model, tc.gpus, err)
			continue
		}
		if len(p.Stages) != tc.k || p.Stages[0].Replicas != tc.d || p.GPUs() != tc.gpus {
			t.Errorf("Lookup(%q, %d): K = %d, d = %d, want %d, %d", tc.model, tc.gpus, len(p.Stages), p.Stages[0].Replicas, tc.k, tc.d)
		}
	}
	a, _ := Lookup("bert-large", 16)
	a.Stages[0].Compute = 99
	if b, _ := Lookup("bert-large", 16); b.Stages[0].Compute == 99 {
		t.Error("Lookup returned shared state")
	}
}

// FuzzLookup checks that Lookup never panics and returns either an error or
// a valid profile of exactly the requested size.
func FuzzLookup(f *testing.F) {
	for _, m := range Models() {
		f.Add(m, 8)
	}
	f.Add("GPT2-1.5B ", 3)
	f.Add("", -1)
	f.Fuzz(func(t *testing.T, model string, gpus int) {
		fuzzbound.Within(t, time.Second, func() {
			if gpus > 1<<20 {
				gpus %= 1 << 20 // keep the profiles small enough to build
			}
			p, err := Lookup(model, gpus)
			if err != nil {
				if p != nil {
					t.Fatal("profile returned with an error")
				}
				return
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("Lookup(%q, %d) returned an invalid profile: %v", model, gpus, err)
			}
			if p.GPUs() != gpus {
				t.Fatalf("Lookup(%q, %d) has %d GPUs", model, gpus, p.GPUs())
			}
		})
	})
}
