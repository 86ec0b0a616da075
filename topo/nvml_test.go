//go:build cgo

package topo

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// fabric describes the links to inject into a mock server.
type fabric struct {
	// switchLinks is the number of NVLinks from every GPU to NVSwitches
	// (0: none).
	switchLinks int
	// pairs lists direct GPU-GPU NVLinks: {a, b, links}.
	pairs [][3]int
	// noNVLink makes GetNvLinkState report NOT_SUPPORTED.
	noNVLink bool
	// numaSplit is the first GPU index on the second NUMA node.
	numaSplit int
	// mig lists GPUs with MIG enabled.
	mig []int
}

func bus(i int) string       { return fmt.Sprintf("00000000:%02X:00.0", 0x10+i*0x10) }
func switchBus(k int) string { return fmt.Sprintf("00000000:%02X:00.0", 0xC0+k) }

func toBusID(s string) [32]int8 {
	var b [32]int8
	for i := 0; i < len(s) && i < 31; i++ {
		b[i] = int8(s[i])
	}
	return b
}

// inject installs topology functions on every device of s, as the stock
// mock servers leave them unset.
func inject(t *testing.T, s *server.Server, f fabric) {
	t.Helper()
	n := len(s.Devices)
	type link struct {
		remote string
		kind   nvml.IntNvLinkDeviceType
	}
	links := make([][]link, n)
	for i := 0; i < n; i++ {
		for k := 0; k < f.switchLinks; k++ {
			links[i] = append(links[i], link{switchBus(k % 6), nvml.NVLINK_DEVICE_TYPE_SWITCH})
		}
	}
	for _, p := range f.pairs {
		for k := 0; k < p[2]; k++ {
			links[p[0]] = append(links[p[0]], link{bus(p[1]), nvml.NVLINK_DEVICE_TYPE_GPU})
			links[p[1]] = append(links[p[1]], link{bus(p[0]), nvml.NVLINK_DEVICE_TYPE_GPU})
		}
	}
	for i, d := range s.Devices {
		dev := d.(*server.Device)
		i := i
		dev.PciBusID = bus(i)
		dev.UUID = fmt.Sprintf("GPU-%08x-0000-4000-8000-000000000000", i) // the mock's are random
		dev.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
			return nvml.PciInfo{BusId: toBusID(bus(i)), PciDeviceId: dev.Config.PciDeviceId}, nvml.SUCCESS
		}
		for _, m := range f.mig {
			if m == i {
				dev.MigMode = nvml.DEVICE_MIG_ENABLE
			}
		}
		dev.GetNvLinkStateFunc = func(l int) (nvml.EnableState, nvml.Return) {
			if f.noNVLink {
				return 0, nvml.ERROR_NOT_SUPPORTED
			}
			if l >= len(links[i]) {
				return nvml.FEATURE_DISABLED, nvml.SUCCESS
			}
			return nvml.FEATURE_ENABLED, nvml.SUCCESS
		}
		dev.GetNvLinkRemotePciInfoFunc = func(l int) (nvml.PciInfo, nvml.Return) {
			if l >= len(links[i]) {
				return nvml.PciInfo{}, nvml.ERROR_INVALID_ARGUMENT
			}
			return nvml.PciInfo{BusId: toBusID(links[i][l].remote)}, nvml.SUCCESS
		}
		dev.GetNvLinkRemoteDeviceTypeFunc = func(l int) (nvml.IntNvLinkDeviceType, nvml.Return) {
			if l >= len(links[i]) {
				return 0, nvml.ERROR_INVALID_ARGUMENT
			}
			return links[i][l].kind, nvml.SUCCESS
		}
		dev.GetTopologyCommonAncestorFunc = func(other nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
			j := other.(*server.Device).Index
			switch {
			case i == j:
				return nvml.TOPOLOGY_INTERNAL, nvml.SUCCESS
			case (i < f.numaSplit) != (j < f.numaSplit):
				return nvml.TOPOLOGY_SYSTEM, nvml.SUCCESS
			case i/2 == j/2:
				return nvml.TOPOLOGY_SINGLE, nvml.SUCCESS
			default:
				return nvml.TOPOLOGY_NODE, nvml.SUCCESS
			}
		}
		dev.GetCpuAffinityFunc = func(words int) ([]uint, nvml.Return) {
			mask := make([]uint, words)
			if i < f.numaSplit {
				mask[0] = 0xFFFF // CPUs 0-15
			} else {
				mask[0] = 0xFFFF << 32 // CPUs 32-47
			}
			return mask, nvml.SUCCESS
		}
	}
}

func TestProbeDGXA100NVSwitch(t *testing.T) {
	s := dgxa100.New()
	inject(t, s, fabric{switchLinks: 12, numaSplit: 4})
	top, err := ProbeWith(s, "dgx01")
	if err != nil {
		t.Fatal(err)
	}
	if err := top.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(top.GPUs) != 8 || top.Driver != "550.54.15" {
		t.Fatalf("%d GPUs, driver %q", len(top.GPUs), top.Driver)
	}
	for i := range top.Links {
		for j, v := range top.Links[i] {
			if i != j && v != 12 {
				t.Fatalf("NVSwitch system: links[%d][%d] = %d, want 12 (all-to-all)", i, j, v)
			}
		}
	}
	g := top.GPUs[5]
	if g.PCIBusID != "0000:60:00.0" || g.SwitchLinks != 12 || g.NVLinks != 12 || g.CPUAffinity != "32-47" || g.MIG || !strings.Contains(g.Model, "A100") {
		t.Errorf("GPU 5: %+v", g)
	}
	if top.PCIe[0][1] != PCIeSingle || top.PCIe[0][2] != PCIeNode || top.PCIe[0][7] != PCIeSystem || top.PCIe[3][3] != PCIeSame {
		t.Errorf("PCIe: %v", top.PCIe)
	}
	checkGolden(t, top, "dgxa100")
}

func TestProbeDGXH100PCIeOnly(t *testing.T) {
	s := dgxh100.New()
	inject(t, s, fabric{noNVLink: true, numaSplit: 4, mig: []int{7}})
	top, err := ProbeWith(s, "h100-pcie")
	if err != nil {
		t.Fatal(err)
	}
	if top.HasNVLink() {
		t.Fatalf("PCIe-only system has NVLinks: %v", top.Links)
	}
	lines := top.GresLines("")
	if len(lines) != 8 || strings.Contains(lines[0], "Links=") || !strings.Contains(lines[0], "Type=h100 File=/dev/nvidia0 Cores=0-15") {
		t.Errorf("gres lines: %q", lines)
	}
	if !strings.HasPrefix(lines[7], "# GPU 7") {
		t.Errorf("MIG GPU line: %q", lines[7])
	}
	checkGolden(t, top, "dgxh100-pcie")
}

// TestProbeNVLinkPairs covers direct GPU-to-GPU NVLinks (bridged pairs),
// found by the remote PCI bus id.
func TestProbeNVLinkPairs(t *testing.T) {
	s := dgxa100.New()
	s.Devices = s.Devices[:4]
	inject(t, s, fabric{pairs: [][3]int{{0, 1, 4}, {2, 3, 4}, {1, 2, 1}}, numaSplit: 2})
	top, err := ProbeWith(s, "pairs")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{-1, 4, 0, 0}, {4, -1, 1, 0}, {0, 1, -1, 4}, {0, 0, 4, -1}}
	for i := range want {
		for j := range want[i] {
			if top.Links[i][j] != want[i][j] {
				t.Fatalf("links = %v, want %v", top.Links, want)
			}
		}
	}
	if !strings.HasSuffix(top.GresLines("a100")[1], "Links=4,-1,1,0") {
		t.Errorf("gres line: %q", top.GresLines("a100")[1])
	}
}

func TestProbeNoLibrary(t *testing.T) {
	lib := nvml.New(nvml.WithLibraryPath(filepath.Join(t.TempDir(), "libnvidia-ml.so.1")))
	_, err := ProbeWith(lib, "x")
	if !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("err = %v, want ErrNoLibrary", err)
	}
	if !strings.Contains(err.Error(), "NVML library not found") {
		t.Errorf("message: %v", err)
	}
}

func TestProbeInitFailure(t *testing.T) {
	s := dgxa100.New()
	s.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
	if _, err := ProbeWith(s, "x"); err == nil || !strings.Contains(err.Error(), "driver is not loaded") {
		t.Errorf("err = %v", err)
	}
}
