package topo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ErrNoSMI is returned by ProbeSMI when nvidia-smi is not on the PATH.
var ErrNoSMI = errors.New("nvidia-smi not found: is the NVIDIA driver installed on this machine?")

// maxSMIOutput bounds what is read from one nvidia-smi run, bytes.
const maxSMIOutput = 4 << 20

// maxSMIGPUs bounds the GPUs one node may report.
const maxSMIGPUs = 1024

// SMIRunner runs nvidia-smi with args and returns its standard output.
type SMIRunner func(ctx context.Context, args ...string) ([]byte, error)

// RunSMI runs the nvidia-smi on the PATH (at most 30 s a call).
func RunSMI(ctx context.Context, args ...string) ([]byte, error) {
	path, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil, ErrNoSMI
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = &limitWriter{w: &out, left: maxSMIOutput}, &limitWriter{w: &errb, left: 4096}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("nvidia-smi %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

type limitWriter struct {
	w    *bytes.Buffer
	left int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	n := min(len(p), l.left)
	l.w.Write(p[:n])
	l.left -= n
	return len(p), nil
}

// smiQuery is the per-GPU query of ProbeSMI.
const smiQuery = "index,minor_number,uuid,pci.bus_id,name,mig.mode.current,driver_version"

// ProbeSMI probes this node's GPUs with nvidia-smi instead of NVML, for a
// binary built without cgo: the GPUs from --query-gpu, the NVLink counts,
// PCIe levels and CPU affinity from `nvidia-smi topo -m`. NVSwitch links
// are not told apart there: GPUs that reach each other through NVSwitches
// show as linked with their link count, which is how Links counts them
// too. node names the result.
func ProbeSMI(ctx context.Context, run SMIRunner, node string) (*Topology, error) {
	q, err := run(ctx, "--query-gpu="+smiQuery, "--format=csv,noheader")
	if err != nil {
		return nil, err
	}
	t := &Topology{Version: Version, Node: node}
	if t.GPUs, t.Driver, err = parseSMIQuery(q); err != nil {
		return nil, err
	}
	m, err := run(ctx, "topo", "-m")
	if err != nil {
		return nil, err
	}
	if err := parseSMITopo(m, t); err != nil {
		return nil, err
	}
	return t, t.Validate()
}

// parseSMIQuery reads the CSV lines of --query-gpu=smiQuery.
func parseSMIQuery(b []byte) ([]GPU, string, error) {
	var gpus []GPU
	driver := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) != 7 {
			return nil, "", fmt.Errorf("nvidia-smi --query-gpu line %d: %d fields, want 7: %.80q", n, len(f), line)
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		idx, err1 := strconv.Atoi(f[0])
		minor, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil || idx != len(gpus) || minor < 0 || len(gpus) >= maxSMIGPUs {
			return nil, "", fmt.Errorf("nvidia-smi --query-gpu line %d: index %q, minor %q", n, f[0], f[1])
		}
		gpus = append(gpus, GPU{Index: idx, Minor: minor, UUID: f[2], PCIBusID: normBusID(f[3]), Model: f[4],
			MIG: strings.EqualFold(f[5], "Enabled")})
		driver = f[6]
	}
	if len(gpus) == 0 {
		return nil, "", errors.New("nvidia-smi --query-gpu: no GPU")
	}
	return gpus, driver, nil
}

// normBusID turns nvidia-smi's "00000000:07:00.0" into "0000:07:00.0",
// lower case, as NVML's probe writes it.
func normBusID(s string) string {
	s = strings.ToLower(s)
	if dom, rest, ok := strings.Cut(s, ":"); ok && len(dom) == 8 {
		s = dom[4:] + ":" + rest
	}
	return s
}

// parseSMITopo reads the matrix of `nvidia-smi topo -m` into t.Links,
// t.PCIe and the GPUs' CPU affinity and link counts.
func parseSMITopo(b []byte, t *Topology) error {
	n := len(t.GPUs)
	t.Links = make([][]int, n)
	t.PCIe = make([][]string, n)
	var header []string
	rows := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \r")
		cells := strings.Split(line, "\t")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case header == nil && len(cells) > 1 && cells[0] == "" && strings.HasPrefix(cells[1], "GPU"):
			header = cells[1:]
		case header != nil && strings.HasPrefix(cells[0], "GPU") && len(cells) > 1:
			i, err := strconv.Atoi(strings.TrimPrefix(cells[0], "GPU"))
			if err != nil || i < 0 || i >= n || t.Links[i] != nil {
				return fmt.Errorf("nvidia-smi topo -m: row %q: not one of the %d GPUs", cells[0], n)
			}
			if len(cells)-1 < n || len(header) < n {
				return fmt.Errorf("nvidia-smi topo -m: row %s has %d cells and the header %d columns for %d GPUs", cells[0], len(cells)-1, len(header), n)
			}
			t.Links[i], t.PCIe[i] = make([]int, n), make([]string, n)
			for j := range n {
				if header[j] != "GPU"+strconv.Itoa(j) {
					return fmt.Errorf("nvidia-smi topo -m: column %d is %q, want GPU%d", j+1, header[j], j)
				}
				links, level, err := smiCell(cells[j+1])
				if err != nil {
					return fmt.Errorf("nvidia-smi topo -m: GPU%d–GPU%d: %w", i, j, err)
				}
				if (i == j) != (level == PCIeSame) {
					return fmt.Errorf("nvidia-smi topo -m: GPU%d–GPU%d: %q", i, j, cells[j+1])
				}
				t.Links[i][j], t.PCIe[i][j] = links, level
				t.GPUs[i].NVLinks = max(t.GPUs[i].NVLinks, links)
			}
			for k, h := range header {
				if h == "CPU Affinity" && k+1 < len(cells) {
					t.GPUs[i].CPUAffinity = cells[k+1]
				}
			}
			rows++
		}
	}
	if header == nil || rows != n {
		return fmt.Errorf("nvidia-smi topo -m: %d GPU rows for %d GPUs", rows, n)
	}
	return nil
}

// smiCell reads one matrix cell: "X" (itself: links -1), "NV<k>" (k
// NVLinks; the PCIe level is not shown, "?"), or a PCIe level.
func smiCell(c string) (int, string, error) {
	switch c {
	case PCIeSame:
		return -1, PCIeSame, nil
	case PCIeSingle, PCIeMulti, PCIeHost, PCIeNode, PCIeSystem:
		return 0, c, nil
	}
	if k, ok := strings.CutPrefix(c, "NV"); ok {
		if v, err := strconv.Atoi(k); err == nil && v > 0 && v <= 1024 {
			return v, "?", nil
		}
	}
	return 0, "", fmt.Errorf("cell %q is not X, NV<n> or a PCIe level", c)
}
