// Package cluster describes the GPU cluster that placement and scheduling
// decisions are made on: nodes, their GPUs and intra-node links, the switch
// tree between nodes, and link bandwidths. It is produced from flags, from
// Slurm's own configuration files (slurmconf) or from an NVML probe.
package cluster

import (
	"errors"
	"fmt"
)

// Default bandwidths in bytes per second, used where no file says otherwise.
const (
	// DefaultNVLink is the per-direction bandwidth between two NVLink-connected
	// GPUs of one node (NVLink 3, 12 links: 300 GB/s).
	DefaultNVLink = 300e9
	// DefaultPCIe is the bandwidth between two GPUs of one node over PCIe
	// (PCIe 4.0 x16: about 32 GB/s, with host bridge overheads about 24 GB/s).
	DefaultPCIe = 24e9
	// DefaultInter is the bandwidth between nodes (one 200 Gb/s InfiniBand
	// HDR port: 25 GB/s).
	DefaultInter = 25e9
)

// Node is one server (a Slurm node).
type Node struct {
	// Name is the Slurm node name.
	Name string
	// GPUs is the number of GPUs in the node (at most 64).
	GPUs int
	// GPUType is the GRES type (for example "a100"); may be empty.
	GPUType string
	// Switch is the name of the leaf switch the node hangs off; empty on a
	// flat cluster.
	Switch string
	// Links, when not nil, is a GPUs×GPUs matrix of NVLink counts between the
	// node's GPUs (gres.conf Links=): 0 means PCIe only, -1 on the diagonal.
	Links [][]int
	// IntraBW is the bandwidth between two GPUs of this node in bytes/s when
	// Links is nil; 0 means the cluster's Bandwidth.Intra.
	IntraBW float64
}

// Switch is one switch of the tree described by Slurm's topology.conf.
type Switch struct {
	// Name is the SwitchName.
	Name string
	// Parent is the name of the switch above this one; empty for a root.
	Parent string
	// Level is 0 for leaf switches (those with Nodes), and one more than the
	// highest child level otherwise.
	Level int
	// LinkSpeed is the bandwidth in bytes/s of traffic that crosses this
	// switch; 0 means Bandwidth.Inter.
	LinkSpeed float64
}

// Bandwidth holds the default link bandwidths in bytes/s.
type Bandwidth struct {
	// NVLink is the bandwidth of one NVLink-connected GPU pair (all its links).
	NVLink float64
	// Intra is the bandwidth between two GPUs of one node without NVLink.
	Intra float64
	// Inter is the bandwidth between two nodes.
	Inter float64
}

// Cluster is the whole machine. Node indices (positions in Nodes) are the
// identifiers used by placements.
type Cluster struct {
	Nodes    []Node
	Switches []Switch
	BW       Bandwidth
}

// MaxGPUsPerNode is the largest GPU count a node may have (placements keep a
// node's GPUs in a 64-bit mask).
const MaxGPUsPerNode = 64

// Uniform returns a flat cluster of n nodes with g GPUs each, named
// node0001..nodeNNNN, with default bandwidths. Its nodes model today's GPU
// servers (DGX/HGX class), whose GPUs are all connected through NVSwitch:
// any two GPUs of a node talk at DefaultNVLink.
func Uniform(n, g int) *Cluster {
	c := &Cluster{Nodes: make([]Node, n), BW: DefaultBandwidth()}
	width := len(fmt.Sprint(n))
	if width < 4 {
		width = 4
	}
	for i := range c.Nodes {
		c.Nodes[i] = Node{Name: fmt.Sprintf("node%0*d", width, i+1), GPUs: g, IntraBW: DefaultNVLink}
	}
	return c
}

// DefaultBandwidth returns the documented default bandwidths.
func DefaultBandwidth() Bandwidth {
	return Bandwidth{NVLink: DefaultNVLink, Intra: DefaultPCIe, Inter: DefaultInter}
}

// TotalGPUs returns G, the number of GPUs in the cluster.
func (c *Cluster) TotalGPUs() int {
	t := 0
	for i := range c.Nodes {
		t += c.Nodes[i].GPUs
	}
	return t
}

// MaxNodeGPUs returns the largest GPU count of any node.
func (c *Cluster) MaxNodeGPUs() int {
	m := 0
	for i := range c.Nodes {
		m = max(m, c.Nodes[i].GPUs)
	}
	return m
}

// Validate checks the cluster for problems that would make placement wrong
// and returns all of them joined.
func (c *Cluster) Validate() error {
	var errs []error
	if len(c.Nodes) == 0 {
		errs = append(errs, errors.New("cluster has no nodes"))
	}
	seen := make(map[string]bool, len(c.Nodes))
	sw := make(map[string]bool, len(c.Switches))
	for _, s := range c.Switches {
		sw[s.Name] = true
	}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if seen[n.Name] {
			errs = append(errs, fmt.Errorf("node %q listed twice", n.Name))
		}
		seen[n.Name] = true
		if n.GPUs < 0 || n.GPUs > MaxGPUsPerNode {
			errs = append(errs, fmt.Errorf("node %q: %d GPUs, want 0..%d", n.Name, n.GPUs, MaxGPUsPerNode))
		}
		if n.Links != nil && len(n.Links) != n.GPUs {
			errs = append(errs, fmt.Errorf("node %q: link matrix has %d rows for %d GPUs", n.Name, len(n.Links), n.GPUs))
		}
		if n.Switch != "" && !sw[n.Switch] {
			errs = append(errs, fmt.Errorf("node %q: unknown switch %q", n.Name, n.Switch))
		}
	}
	if c.BW.Inter <= 0 || c.BW.Intra <= 0 || c.BW.NVLink <= 0 {
		errs = append(errs, errors.New("bandwidths must be positive"))
	}
	return errors.Join(errs...)
}
