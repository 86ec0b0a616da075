package slurmconf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/tomlbound"
)

// manyRacks is n lines "NodeName=r{i}n[1-65536]": each line one full
// hostlist, MaxHosts names.
func manyRacks(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "NodeName=r%dn[1-65536] CPUs=8\n", i)
	}
	return b.String()
}

// hasProblem reports whether ps has an error at file:line whose text
// contains want.
func hasProblem(ps Problems, file string, line int, want string) bool {
	for _, p := range ps.Errors() {
		if p.File == file && p.Line == line && strings.Contains(p.Error(), want) {
			return true
		}
	}
	return false
}

func TestHostBudget(t *testing.T) {
	tests := []struct {
		name  string
		left  int
		exprs []string
		fail  int // index of the first expression refused; -1 none
	}{
		{"within", 10, []string{"a[1-4]", "b[1-6]"}, -1},
		{"exactly spent, then any name fails", 10, []string{"a[1-10]", "b"}, 1},
		{"one expression past the total", 10, []string{"a[1-4]", "b[1-7]"}, 1},
		{"cartesian product past the total", 10, []string{"r[1-4]n[1-4]"}, 0},
		{"per-expression limit still applies", MaxConfigHosts, []string{"n[0-65536]"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &hostBudget{left: tt.left, total: tt.left, what: "names in all"}
			fail := -1
			for i, e := range tt.exprs {
				if _, err := b.expand(e); err != nil {
					if !errors.Is(err, ErrTooManyHosts) {
						t.Fatalf("expand(%q) = %v; want ErrTooManyHosts", e, err)
					}
					if tt.left < MaxHosts && !strings.Contains(err.Error(), fmt.Sprintf("limit %d names in all", tt.left)) {
						t.Errorf("expand(%q) = %v; want the total named", e, err)
					}
					fail = i
					break
				}
			}
			if fail != tt.fail {
				t.Errorf("first refused = %d, want %d", fail, tt.fail)
			}
		})
	}
}

// TestMaxConfigHosts is the reproducer of many NodeName lines of 65,536
// names each: past MaxConfigHosts every further line is an error found
// without expanding it, so the work is bounded by the limit, not the file.
func TestMaxConfigHosts(t *testing.T) {
	if MaxConfigHosts%MaxHosts != 0 {
		t.Fatal("test assumes MaxConfigHosts is a multiple of MaxHosts")
	}
	full := MaxConfigHosts / MaxHosts
	start := time.Now()
	c, ps := ParseSlurmConf(strings.NewReader(manyRacks(200)), "slurm.conf", nil)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("parse took %v", d)
	}
	if len(c.Nodes) != MaxConfigHosts {
		t.Errorf("%d nodes, want %d", len(c.Nodes), MaxConfigHosts)
	}
	want := fmt.Sprintf("%v (limit %d names in all in one configuration file)", ErrTooManyHosts, MaxConfigHosts)
	for _, line := range []int{full + 1, 200} {
		if !hasProblem(ps, "slurm.conf", line, want) {
			t.Errorf("no problem at slurm.conf:%d containing %q; have %d problems, first %v", line, want, len(ps), ps[:min(len(ps), 1)])
		}
	}
	if n := len(ps.Errors()); n != 200-full {
		t.Errorf("%d errors, want %d", n, 200-full)
	}
}

// TestBandwidthBounds covers the bandwidth file reproducers: deep inline
// tables (quadratic in the TOML decoder) and many names of 65,536 hosts.
func TestBandwidthBounds(t *testing.T) {
	deep := "[bandwidth]\n" + "a=" + strings.Repeat("{b=", 5000) + "1" + strings.Repeat("}", 5000) + "\n"
	var names strings.Builder
	names.WriteString("[bandwidth]\nnvlink = \"300 GB/s\"\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&names, "[[node]]\nnames = \"r%dn[1-65536]\"\nintra = \"16 GB/s\"\n", i)
	}
	tests := []struct {
		name, in string
		line     int
		field    string
		want     string
	}{
		{"16 KB of nested inline tables", deep, 2, "", fmt.Sprintf("more than %d levels", tomlbound.MaxDepth)},
		{"dotted key of 10,000 parts", strings.Repeat("a.", 10000) + "a = 1\n", 1, "", fmt.Sprintf("more than %d parts", tomlbound.MaxDepth)},
		{"larger than 1 MiB", strings.Repeat("# x\n", tomlbound.MaxSize/4+1), 0, "", "larger than 1048576 bytes"},
		{"100 names of 65,536 hosts", names.String(), 0, fmt.Sprintf("node[%d].names", MaxConfigHosts/MaxHosts), fmt.Sprintf("limit %d names in all", MaxConfigHosts)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, ps := ParseBandwidthConf(strings.NewReader(tt.in), "bw.toml")
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("parse took %v", d)
			}
			found := false
			for _, p := range ps {
				if p.File == "bw.toml" && p.Line == tt.line && p.Field == tt.field && strings.Contains(p.Msg, tt.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("no problem bw.toml:%d %s containing %q in %v", tt.line, tt.field, tt.want, ps[:min(len(ps), 3)])
			}
		})
	}
}

// TestPartitionMembersBound checks that partitions resolving ALL over and
// over stop at MaxPartitionMembers instead of copying every node for each.
func TestPartitionMembersBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("NodeName=n[1-65536]\n")
	parts := MaxPartitionMembers/MaxHosts + 2
	for i := 0; i < parts; i++ {
		fmt.Fprintf(&b, "PartitionName=p%d Nodes=ALL,ALL,ALL\n", i)
	}
	src := memSource{"/c/slurm.conf": b.String()}
	start := time.Now()
	cfg, _ := Load("/c", Options{Source: src})
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("load took %v", d)
	}
	want := fmt.Sprintf("limit %d node memberships in all partitions", MaxPartitionMembers)
	if !hasProblem(cfg.Problems, "/c/slurm.conf", parts+1, want) {
		t.Errorf("no problem at /c/slurm.conf:%d containing %q", parts+1, want)
	}
	if got := len(cfg.Partitions[0].Nodes); got != MaxHosts {
		t.Errorf("first partition has %d nodes, want %d", got, MaxHosts)
	}
}

// TestIncludeNotRegular checks that an Include of a FIFO or a directory is
// refused, naming the file, instead of blocking forever.
func TestIncludeNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.conf")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := "ClusterName=c\nInclude fifo.conf\nInclude sub.conf\nNodeName=n1\n"
	if err := os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan *Config, 1)
	go func() { cfg, _ := Load(dir, Options{}); done <- cfg }()
	select {
	case cfg := <-done:
		sc := filepath.Join(dir, "slurm.conf")
		for line, name := range map[int]string{2: fifo, 3: filepath.Join(dir, "sub.conf")} {
			if !hasProblem(cfg.Problems, sc, line, name+": "+ErrNotRegular.Error()) {
				t.Errorf("no problem at %s:%d refusing %s: %v", sc, line, name, cfg.Problems)
			}
		}
		if len(cfg.Cluster.Nodes) != 1 {
			t.Errorf("%d nodes, want 1", len(cfg.Cluster.Nodes))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Include of a FIFO blocked")
	}
}
