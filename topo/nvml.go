//go:build cgo

package topo

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NVMLBuilt tells whether this binary can probe GPUs (it was built with
// cgo).
const NVMLBuilt = true

// Probe loads libnvidia-ml.so.1 and probes this machine's GPUs; node names
// the result. Without the driver it returns ErrNoLibrary.
func Probe(node string) (*Topology, error) {
	return ProbeWith(nvml.New(), node)
}

// ProbeWith probes through lib (the real library or a mock such as
// github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100). It initialises and
// shuts lib down.
func ProbeWith(lib nvml.Interface, node string) (*Topology, error) {
	switch ret := lib.Init(); ret {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return nil, ErrNoLibrary
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return nil, fmt.Errorf("NVML: the NVIDIA kernel driver is not loaded: %w", ret)
	default:
		return nil, fmt.Errorf("NVML init: %w", ret)
	}
	defer lib.Shutdown()

	t := &Topology{Version: Version, Node: node}
	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		t.Driver = v
	}
	count, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML device count: %w", ret)
	}
	// Newer entry points are looked up first: calling a symbol an old
	// driver lacks would abort the process.
	hasRemoteType := lib.Extensions().LookupSymbol("nvmlDeviceGetNvLinkRemoteDeviceType") == nil

	devs := make([]nvml.Device, count)
	busIndex := make(map[string]int, count)
	for i := 0; i < count; i++ {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML device %d: %w", i, ret)
		}
		devs[i] = d
		g := GPU{Index: i, Minor: i}
		if m, ret := d.GetMinorNumber(); ret == nvml.SUCCESS {
			g.Minor = m
		}
		if u, ret := d.GetUUID(); ret == nvml.SUCCESS {
			g.UUID = u
		}
		if n, ret := d.GetName(); ret == nvml.SUCCESS {
			g.Model = n
		}
		if p, ret := d.GetPciInfo(); ret == nvml.SUCCESS {
			g.PCIBusID = NormalizeBusID(busID(p.BusId[:]))
			busIndex[g.PCIBusID] = i
		}
		if cur, _, ret := d.GetMigMode(); ret == nvml.SUCCESS {
			g.MIG = cur == nvml.DEVICE_MIG_ENABLE
		}
		// 1024 CPUs in 64-bit words.
		if words, ret := d.GetCpuAffinity(16); ret == nvml.SUCCESS {
			mask := make([]uint64, len(words))
			for k, w := range words {
				mask[k] = uint64(w)
			}
			g.CPUAffinity = CPUList(mask)
		}
		t.GPUs = append(t.GPUs, g)
	}

	direct := make([][]int, count)
	for i := range direct {
		direct[i] = make([]int, count)
	}
	for i, d := range devs {
		for l := 0; l < nvml.NVLINK_MAX_LINKS; l++ {
			state, ret := d.GetNvLinkState(l)
			if ret == nvml.ERROR_NOT_SUPPORTED && l == 0 {
				break // no NVLink on this GPU
			}
			if ret != nvml.SUCCESS || state != nvml.FEATURE_ENABLED {
				continue
			}
			t.GPUs[i].NVLinks++
			remote, ret := d.GetNvLinkRemotePciInfo(l)
			if ret != nvml.SUCCESS {
				continue
			}
			peer, isGPU := busIndex[NormalizeBusID(busID(remote.BusId[:]))]
			isSwitch := !isGPU
			if hasRemoteType {
				if typ, ret := d.GetNvLinkRemoteDeviceType(l); ret == nvml.SUCCESS {
					isSwitch = typ == nvml.NVLINK_DEVICE_TYPE_SWITCH
				}
			}
			switch {
			case isSwitch:
				t.GPUs[i].SwitchLinks++
			case isGPU && peer != i:
				direct[i][peer]++
			}
		}
	}
	t.Links = make([][]int, count)
	t.PCIe = make([][]string, count)
	for i := range t.Links {
		t.Links[i] = make([]int, count)
		t.PCIe[i] = make([]string, count)
		for j := range t.Links[i] {
			if i == j {
				t.Links[i][j] = -1
				t.PCIe[i][j] = PCIeSame
				continue
			}
			n := max(direct[i][j], direct[j][i])
			if si, sj := t.GPUs[i].SwitchLinks, t.GPUs[j].SwitchLinks; si > 0 && sj > 0 {
				n += min(si, sj)
			}
			t.Links[i][j] = n
			t.PCIe[i][j] = "?"
			if lv, ret := devs[i].GetTopologyCommonAncestor(devs[j]); ret == nvml.SUCCESS {
				t.PCIe[i][j] = levelName(lv)
			}
		}
	}
	return t, nil
}

func levelName(lv nvml.GpuTopologyLevel) string {
	switch lv {
	case nvml.TOPOLOGY_INTERNAL:
		return PCIeSame
	case nvml.TOPOLOGY_SINGLE:
		return PCIeSingle
	case nvml.TOPOLOGY_MULTIPLE:
		return PCIeMulti
	case nvml.TOPOLOGY_HOSTBRIDGE:
		return PCIeHost
	case nvml.TOPOLOGY_NODE:
		return PCIeNode
	case nvml.TOPOLOGY_SYSTEM:
		return PCIeSystem
	}
	return "?"
}

// busID turns NVML's NUL-terminated char array into a string.
func busID(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}
