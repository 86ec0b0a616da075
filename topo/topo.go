// Package topo probes the GPU topology of one node with NVML (NVIDIA's
// management library): the GPUs, their NVLink matrix, their PCIe distance
// and CPU affinity. It prints gres.conf lines that let Slurm's cons_tres
// prefer linked GPUs, and writes a JSON topology file that asrpt reads back
// (ReadJSON) to give the cluster model per-node link matrices.
//
// The NVML code needs cgo (github.com/NVIDIA/go-nvml loads
// libnvidia-ml.so.1 at run time). Built without cgo, Probe returns
// ErrNotBuilt, and ProbeSMI reads the same facts from nvidia-smi's
// --query-gpu and topo -m instead (asrpt topo falls back to it); on a
// machine without the NVIDIA driver Probe returns ErrNoLibrary. Everything
// else in this package is pure Go.
package topo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Version is the schema version of the JSON topology file.
const Version = 1

// ErrNotBuilt is returned by Probe in a binary built without cgo.
var ErrNotBuilt = errors.New("NVML support was not built into this asrpt (it was compiled with CGO_ENABLED=0); rebuild with cgo enabled to probe GPUs")

// ErrNoLibrary is returned by Probe when libnvidia-ml.so.1 cannot be
// loaded, i.e. on a machine without the NVIDIA driver.
var ErrNoLibrary = errors.New("NVML library not found (libnvidia-ml.so.1): is the NVIDIA driver installed on this machine?")

// PCIe common-ancestor levels, as nvidia-smi topo -m names them.
const (
	PCIeSame   = "X"    // the GPU itself
	PCIeSingle = "PIX"  // at most one PCIe bridge between them
	PCIeMulti  = "PXB"  // several PCIe bridges, no host bridge
	PCIeHost   = "PHB"  // through a PCIe host bridge (one CPU)
	PCIeNode   = "NODE" // host bridges within one NUMA node
	PCIeSystem = "SYS"  // across the SMP interconnect between NUMA nodes
)

// GPU is one GPU of the node.
type GPU struct {
	// Index is NVML's index (PCI bus order); it is the position in Links.
	Index int `json:"index"`
	// Minor is the device minor number: the GPU is /dev/nvidia<Minor>.
	Minor int    `json:"minor"`
	UUID  string `json:"uuid"`
	// PCIBusID is "dddd:bb:dd.f", lower case.
	PCIBusID string `json:"pci_bus_id"`
	Model    string `json:"model"`
	// MIG tells whether MIG mode is enabled (current mode).
	MIG bool `json:"mig"`
	// CPUAffinity is the list of CPUs local to the GPU ("0-15,32-47"); empty
	// when NVML does not say.
	CPUAffinity string `json:"cpu_affinity,omitempty"`
	// NVLinks is the number of active NVLinks of the GPU.
	NVLinks int `json:"nvlinks"`
	// SwitchLinks is how many of them end at an NVSwitch.
	SwitchLinks int `json:"switch_links"`
}

// Topology is the probe result for one node.
type Topology struct {
	Version int `json:"version"`
	// Node is the Slurm node name (the host name unless told otherwise).
	Node   string `json:"node"`
	Driver string `json:"driver,omitempty"`
	GPUs   []GPU  `json:"gpus"`
	// Links is GPUs×GPUs NVLink counts, -1 on the diagonal. GPUs that reach
	// each other through NVSwitches count as connected all-to-all, with the
	// smaller of their two switch link counts.
	Links [][]int `json:"links"`
	// PCIe is GPUs×GPUs common-ancestor levels (PCIe* constants).
	PCIe [][]string `json:"pcie"`
}

// Validate checks the shape of t: a node name, GPU indices 0..n-1, square
// matrices with -1 on the diagonal.
func (t *Topology) Validate() error {
	var errs []error
	if t.Version != Version {
		errs = append(errs, fmt.Errorf("version %d, want %d", t.Version, Version))
	}
	if t.Node == "" {
		errs = append(errs, errors.New("node name is empty"))
	}
	n := len(t.GPUs)
	for i, g := range t.GPUs {
		if g.Index != i {
			errs = append(errs, fmt.Errorf("gpus[%d] has index %d", i, g.Index))
		}
	}
	if len(t.Links) != n {
		errs = append(errs, fmt.Errorf("links has %d rows for %d GPUs", len(t.Links), n))
	} else {
		for i, row := range t.Links {
			if len(row) != n {
				errs = append(errs, fmt.Errorf("links row %d has %d entries for %d GPUs", i, len(row), n))
				continue
			}
			for j, v := range row {
				if (i == j) != (v == -1) || v < -1 {
					errs = append(errs, fmt.Errorf("links[%d][%d] = %d", i, j, v))
				}
			}
		}
	}
	if t.PCIe != nil && len(t.PCIe) != n {
		errs = append(errs, fmt.Errorf("pcie has %d rows for %d GPUs", len(t.PCIe), n))
	}
	return errors.Join(errs...)
}

// WriteJSON writes t as indented JSON.
func (t *Topology) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(t); err != nil {
		return fmt.Errorf("write topology: %w", err)
	}
	return nil
}

// ReadJSON reads a topology file written by WriteJSON (`asrpt topo
// --out`); name is used in errors. Unknown fields are refused.
func ReadJSON(r io.Reader, name string) (*Topology, error) {
	dec := json.NewDecoder(io.LimitReader(r, 16<<20))
	dec.DisallowUnknownFields()
	var t Topology
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &t, nil
}

// HasNVLink reports whether any two GPUs share an NVLink.
func (t *Topology) HasNVLink() bool {
	for i, row := range t.Links {
		for j, v := range row {
			if i != j && v > 0 {
				return true
			}
		}
	}
	return false
}

// GresType derives a GRES type from a model name: the first word with a
// digit, cut at '-', prefixed by a preceding product-line word that is not
// a brand ("NVIDIA A100-SXM4-40GB" is "a100", "Tesla V100-SXM2-16GB" is
// "v100", "NVIDIA H100 80GB HBM3" is "h100", "NVIDIA GeForce RTX 4090" is
// "rtx4090"); "gpu" when no word has a digit.
func GresType(model string) string {
	brands := map[string]bool{"nvidia": true, "tesla": true, "geforce": true, "quadro": true, "mock": true}
	words := strings.Fields(strings.ToLower(model))
	for i, w := range words {
		if !strings.ContainsAny(w, "0123456789") {
			continue
		}
		if j := strings.IndexAny(w, "-_"); j > 0 {
			w = w[:j]
		}
		if i > 0 && !brands[words[i-1]] && !strings.ContainsAny(words[i-1], "0123456789") {
			w = words[i-1] + w
		}
		return w
	}
	return "gpu"
}

// GresLines returns gres.conf lines for the node, one per GPU in index
// order so that Links= positions match: "NodeName=n Name=gpu Type=a100
// File=/dev/nvidia0 Cores=0-15 Links=-1,12,...". typ overrides the type
// derived from the model name. Links= is left out on a node without
// NVLink. Cores= is the CPU affinity NVML reports, in OS CPU numbers; on
// nodes with SMT, Slurm's Cores= wants core indices, so check it there.
// A MIG-enabled GPU gets a comment instead (Slurm needs AutoDetect=nvml
// for MIG devices).
func (t *Topology) GresLines(typ string) []string {
	var out []string
	nvlink := t.HasNVLink()
	for i, g := range t.GPUs {
		if g.MIG {
			out = append(out, fmt.Sprintf("# GPU %d (%s) has MIG enabled: use AutoDetect=nvml for its MIG devices", g.Index, g.PCIBusID))
			continue
		}
		var b strings.Builder
		if t.Node != "" {
			fmt.Fprintf(&b, "NodeName=%s ", t.Node)
		}
		ty := typ
		if ty == "" {
			ty = GresType(g.Model)
		}
		fmt.Fprintf(&b, "Name=gpu Type=%s File=/dev/nvidia%d", ty, g.Minor)
		if g.CPUAffinity != "" {
			fmt.Fprintf(&b, " Cores=%s", g.CPUAffinity)
		}
		if nvlink && i < len(t.Links) {
			parts := make([]string, len(t.Links[i]))
			for j, v := range t.Links[i] {
				parts[j] = strconv.Itoa(v)
			}
			fmt.Fprintf(&b, " Links=%s", strings.Join(parts, ","))
		}
		out = append(out, b.String())
	}
	return out
}

// CPUList formats a CPU affinity bitmask (64 CPUs per word, CPU 0 the low
// bit of word 0) as a range list such as "0-15,32-47".
func CPUList(mask []uint64) string {
	var parts []string
	start := -1
	n := len(mask) * 64
	for c := 0; c <= n; c++ {
		set := c < n && mask[c/64]&(1<<(c%64)) != 0
		switch {
		case set && start < 0:
			start = c
		case !set && start >= 0:
			if c-1 == start {
				parts = append(parts, strconv.Itoa(start))
			} else {
				parts = append(parts, fmt.Sprintf("%d-%d", start, c-1))
			}
			start = -1
		}
	}
	return strings.Join(parts, ",")
}

// NormalizeBusID turns NVML's "00000000:07:00.0" into "0000:07:00.0"
// (lower case, 4-digit domain); other strings are lower-cased only.
func NormalizeBusID(s string) string {
	s = strings.ToLower(strings.TrimRight(strings.TrimSpace(s), "\x00"))
	dom, rest, ok := strings.Cut(s, ":")
	if !ok || strings.Count(rest, ":") != 1 {
		return s
	}
	d, err := strconv.ParseUint(dom, 16, 32)
	if err != nil {
		return s
	}
	return fmt.Sprintf("%04x:%s", d, rest)
}

// Text writes a human-readable report: the GPU table, the NVLink matrix
// and the PCIe matrix.
func (t *Topology) Text(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "node %s, %d GPUs", t.Node, len(t.GPUs))
	if t.Driver != "" {
		fmt.Fprintf(&b, ", driver %s", t.Driver)
	}
	b.WriteString("\n\nidx minor  pci bus id    mig  nvlinks  cpus          model / uuid\n")
	for _, g := range t.GPUs {
		mig := "off"
		if g.MIG {
			mig = "on"
		}
		nv := strconv.Itoa(g.NVLinks)
		if g.SwitchLinks > 0 {
			nv += "(sw)"
		}
		fmt.Fprintf(&b, "%3d %5d  %-12s  %-3s  %-7s  %-12s  %s %s\n", g.Index, g.Minor, g.PCIBusID, mig, nv, g.CPUAffinity, g.Model, g.UUID)
	}
	matrix := func(title string, cell func(i, j int) string) {
		fmt.Fprintf(&b, "\n%s\n      ", title)
		for j := range t.GPUs {
			fmt.Fprintf(&b, "%5s", "GPU"+strconv.Itoa(j))
		}
		b.WriteByte('\n')
		for i := range t.GPUs {
			fmt.Fprintf(&b, "%-6s", "GPU"+strconv.Itoa(i))
			for j := range t.GPUs {
				fmt.Fprintf(&b, "%5s", cell(i, j))
			}
			b.WriteByte('\n')
		}
	}
	matrix("NVLink (links per pair)", func(i, j int) string {
		if i == j {
			return "X"
		}
		if v := t.Links[i][j]; v > 0 {
			return "NV" + strconv.Itoa(v)
		}
		return "-"
	})
	if len(t.PCIe) == len(t.GPUs) {
		matrix("PCIe common ancestor", func(i, j int) string {
			if j < len(t.PCIe[i]) {
				return t.PCIe[i][j]
			}
			return "?"
		})
	}
	_, err := io.WriteString(w, b.String())
	return err
}
