//go:build !cgo

package topo

// NVMLBuilt tells whether this binary can probe GPUs (it was built with
// cgo).
const NVMLBuilt = false

// Probe reports ErrNotBuilt: this binary was built without cgo, which NVML
// needs.
func Probe(node string) (*Topology, error) {
	return nil, ErrNotBuilt
}
