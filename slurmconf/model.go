package slurmconf

// Model is the JSON form of a loaded configuration that `asrpt conf show
// --json` prints. Bandwidths are bytes/s.
type Model struct {
	ClusterName    string           `json:"cluster_name,omitempty"`
	SchedulerType  string           `json:"scheduler_type,omitempty"`
	PriorityType   string           `json:"priority_type,omitempty"`
	SelectType     string           `json:"select_type,omitempty"`
	TopologyPlugin string           `json:"topology_plugin,omitempty"`
	GresTypes      []string         `json:"gres_types,omitempty"`
	TotalGPUs      int              `json:"total_gpus"`
	Nodes          []ModelNode      `json:"nodes"`
	Partitions     []ModelPartition `json:"partitions"`
	Switches       []ModelSwitch    `json:"switches"`
	Bandwidth      ModelBandwidth   `json:"bandwidth"`
}

// ModelNode is one node of Model.
type ModelNode struct {
	Name     string   `json:"name"`
	GPUs     int      `json:"gpus"`
	GPUType  string   `json:"gpu_type"`
	Switch   string   `json:"switch"`
	CPUs     int      `json:"cpus"`
	MemoryMB int64    `json:"memory_mb"`
	Features []string `json:"features,omitempty"`
	Weight   int64    `json:"weight"`
	// Links is the NVLink count matrix, when known.
	Links [][]int `json:"links,omitempty"`
	// IntraBW is the node's GPU-to-GPU bandwidth without NVLink, when the
	// bandwidth file sets one.
	IntraBW float64 `json:"intra_bw,omitempty"`
}

// ModelPartition is one partition of Model; Nodes is a compressed hostlist.
type ModelPartition struct {
	Name         string `json:"name"`
	Nodes        string `json:"nodes"`
	NodeCount    int    `json:"node_count"`
	GPUs         int    `json:"gpus"`
	Default      bool   `json:"default"`
	PriorityTier int    `json:"priority_tier"`
	State        string `json:"state,omitempty"`
}

// ModelSwitch is one switch of Model.
type ModelSwitch struct {
	Name   string `json:"name"`
	Parent string `json:"parent,omitempty"`
	Level  int    `json:"level"`
	// LinkSpeed is bytes/s; 0 means the inter-node bandwidth.
	LinkSpeed float64 `json:"link_speed,omitempty"`
	// Nodes is the compressed hostlist of nodes directly under the switch.
	Nodes string `json:"nodes,omitempty"`
}

// ModelBandwidth holds the cluster's default bandwidths in bytes/s.
type ModelBandwidth struct {
	NVLink float64 `json:"nvlink"`
	Intra  float64 `json:"intra"`
	Inter  float64 `json:"inter"`
}

// Model returns the JSON-ready model of cfg.
func (cfg *Config) Model() Model {
	sc := cfg.Slurm
	cl := cfg.Cluster
	m := Model{
		ClusterName:    sc.ClusterName,
		SchedulerType:  sc.SchedulerType,
		PriorityType:   sc.PriorityType,
		SelectType:     sc.SelectType,
		TopologyPlugin: sc.TopologyPlugin,
		GresTypes:      sc.GresTypes,
		TotalGPUs:      cl.TotalGPUs(),
		Nodes:          []ModelNode{},
		Partitions:     []ModelPartition{},
		Switches:       []ModelSwitch{},
		Bandwidth:      ModelBandwidth{NVLink: cl.BW.NVLink, Intra: cl.BW.Intra, Inter: cl.BW.Inter},
	}
	gpus := make(map[string]int, len(cl.Nodes))
	under := map[string][]string{}
	for i := range cl.Nodes {
		n := &cl.Nodes[i]
		mn := ModelNode{Name: n.Name, GPUs: n.GPUs, GPUType: n.GPUType, Switch: n.Switch, Links: n.Links, IntraBW: n.IntraBW}
		if i < len(sc.Nodes) && sc.Nodes[i].Name == n.Name {
			d := &sc.Nodes[i]
			mn.CPUs, mn.MemoryMB, mn.Features, mn.Weight = d.CPUs, d.RealMemory, d.Features, d.Weight
		}
		m.Nodes = append(m.Nodes, mn)
		gpus[n.Name] = n.GPUs
		if n.Switch != "" {
			under[n.Switch] = append(under[n.Switch], n.Name)
		}
	}
	for _, p := range cfg.Partitions {
		mp := ModelPartition{Name: p.Name, Nodes: CompressHostlist(p.Nodes), NodeCount: len(p.Nodes),
			Default: p.Default, PriorityTier: p.PriorityTier, State: p.State}
		for _, n := range p.Nodes {
			mp.GPUs += gpus[n]
		}
		m.Partitions = append(m.Partitions, mp)
	}
	for _, s := range cl.Switches {
		m.Switches = append(m.Switches, ModelSwitch{Name: s.Name, Parent: s.Parent, Level: s.Level,
			LinkSpeed: s.LinkSpeed, Nodes: CompressHostlist(under[s.Name])})
	}
	return m
}
