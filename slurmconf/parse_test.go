package slurmconf

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
)

// memSource is an in-memory Source for Include tests.
type memSource map[string]string

func (m memSource) ReadFile(p string) ([]byte, error) {
	s, ok := m[p]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return []byte(s), nil
}

func (m memSource) Glob(pattern string) ([]string, error) {
	var out []string
	for k := range m {
		if ok, err := path.Match(pattern, k); err != nil {
			return nil, err
		} else if ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

func TestLexer(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // "line: k=v k=v"
		prob string
	}{
		{name: "comment and blank", in: "# c\n\n  a=1 # trailing\n", want: []string{"3: a=1"}},
		{name: "escaped hash", in: `Reason=rack\#3 b=2`, want: []string{"1: Reason=rack#3 b=2"}},
		{name: "continuation", in: "NodeName=a \\\n  CPUs=4 \\\n  Gres=gpu:1\nX=y\n", want: []string{"1: NodeName=a CPUs=4 Gres=gpu:1", "4: X=y"}},
		{name: "double backslash is not continuation", in: "A=x\\\\\nB=y", want: []string{`1: A=x\\`, "2: B=y"}},
		{name: "continuation at EOF", in: "A=1 \\", want: []string{"1: A=1"}},
		{name: "quotes", in: `Features="a b,c" Reason="" k = v`, want: []string{"1: Features=a b,c Reason= k=v"}},
		{name: "operators", in: "Features+=x", want: []string{"1: Features+=x"}},
		{name: "crlf", in: "A=1\r\nB=2\r\n", want: []string{"1: A=1", "2: B=2"}},
		{name: "unterminated quote", in: `A="x`, prob: "unterminated quote"},
		{name: "no equals", in: "A B", prob: "want key=value"},
		{name: "text after quote", in: `A="x"y`, prob: "after closing quote"},
		{name: "include without source", in: "Include other.conf\nA=1", want: []string{"2: A=1"}, prob: "not followed"},
		{name: "include word as key", in: "IncludeX=1", want: []string{"1: IncludeX=1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ps Problems
			lines := lex(strings.NewReader(tc.in), "f.conf", nil, &ps)
			var got []string
			for _, l := range lines {
				var kv []string
				for _, p := range l.Pairs {
					kv = append(kv, p.Key+p.Op+"="+p.Value)
				}
				got = append(got, fmt.Sprintf("%d: %s", l.Line, strings.Join(kv, " ")))
			}
			if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("lines = %q, want %q", got, tc.want)
			}
			if tc.prob == "" && len(ps) > 0 {
				t.Errorf("problems: %v", ps)
			}
			if tc.prob != "" && (len(ps) == 0 || !strings.Contains(ps[0].Error(), tc.prob)) {
				t.Errorf("problems %v, want %q", ps, tc.prob)
			}
		})
	}
}

func TestInclude(t *testing.T) {
	src := memSource{
		"/etc/slurm/slurm.conf":        "ClusterName=c1\nInclude nodes.conf\nInclude /abs/%c.conf\nInclude parts/*.conf\nGresTypes=gpu",
		"/etc/slurm/nodes.conf":        "NodeName=n[1-2] Gres=gpu:2\nInclude sub/more.conf",
		"/etc/slurm/sub/more.conf":     "NodeName=n3 Gres=gpu:1",
		"/abs/c1.conf":                 "SchedulerType=sched/builtin",
		"/etc/slurm/parts/b.conf":      "PartitionName=b Nodes=n3",
		"/etc/slurm/parts/a.conf":      "PartitionName=a Nodes=n[1-2]",
		"/etc/slurm/loop.conf":         "Include loop.conf",
		"/etc/slurm/slurm-loop.conf":   "Include loop.conf\nGresTypes=gpu",
		"/etc/slurm/slurm-noglob.conf": "Include none/*.conf",
	}
	data, _ := src.ReadFile("/etc/slurm/slurm.conf")
	c, ps := ParseSlurmConf(strings.NewReader(string(data)), "/etc/slurm/slurm.conf", src)
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	var names []string
	for _, n := range c.Nodes {
		names = append(names, n.Name+"@"+filepath.Base(n.File))
	}
	if want := []string{"n1@nodes.conf", "n2@nodes.conf", "n3@more.conf"}; !reflect.DeepEqual(names, want) {
		t.Errorf("nodes %v, want %v (nested relative include resolves against the including file)", names, want)
	}
	if c.SchedulerType != "sched/builtin" {
		t.Errorf("absolute include with %%c: SchedulerType=%q", c.SchedulerType)
	}
	if len(c.Partitions) != 2 || c.Partitions[0].Name != "a" {
		t.Errorf("glob include order: %+v", c.Partitions)
	}

	_, ps = ParseSlurmConf(strings.NewReader("Include loop.conf"), "/etc/slurm/slurm-loop.conf", src)
	if len(ps) != 1 || !strings.Contains(ps[0].Error(), "includes itself") || ps[0].File != "/etc/slurm/loop.conf" {
		t.Errorf("include loop: %v", ps)
	}
	_, ps = ParseSlurmConf(strings.NewReader("Include none/*.conf"), "/etc/slurm/slurm-noglob.conf", src)
	if len(ps) != 1 || !strings.Contains(ps[0].Error(), "matches no file") {
		t.Errorf("empty glob: %v", ps)
	}
}

// TestIncludeOS runs an absolute Include through the real file system.
func TestIncludeOS(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "nodes.conf"), []byte("NodeName=x[1-2] Gres=gpu:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("GresTypes=gpu\nInclude %s\nPartitionName=p Nodes=ALL\n", filepath.Join(other, "nodes.conf"))
	if err := os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Cluster.Nodes) != 2 || len(cfg.Partitions[0].Nodes) != 2 {
		t.Errorf("nodes %+v partitions %+v", cfg.Cluster.Nodes, cfg.Partitions)
	}
}

func TestParseGresSpecs(t *testing.T) {
	tests := []struct {
		in   string
		want []GresSpec
		err  bool
	}{
		{in: "gpu:a100:8", want: []GresSpec{{Name: "gpu", Type: "a100", Count: 8}}},
		{in: "gpu:4", want: []GresSpec{{Name: "gpu", Count: 4}}},
		{in: "gpu", want: []GresSpec{{Name: "gpu", Count: 1}}},
		{in: "gpu:tesla", want: []GresSpec{{Name: "gpu", Type: "tesla", Count: 1}}},
		{in: "gpu:a100:2,gpu:v100:2(S:0-1),mps:400", want: []GresSpec{
			{Name: "gpu", Type: "a100", Count: 2}, {Name: "gpu", Type: "v100", Count: 2}, {Name: "mps", Count: 400}}},
		{in: "gpu:a100:no_consume:4", want: []GresSpec{{Name: "gpu", Type: "a100", Count: 4, NoConsume: true}}},
		{in: "bandwidth:lustre:4G", want: []GresSpec{{Name: "bandwidth", Type: "lustre", Count: 4 << 30}}},
		{in: "(null)", want: nil},
		{in: "", want: nil},
		{in: ":4", err: true},
		{in: "gpu:a:b:4", err: true},
		{in: "gpu:4x", err: true},
		{in: "gpu::4", err: true},
		{in: "gpu:a100:99999999999999999999", err: true},
	}
	for _, tc := range tests {
		got, err := ParseGresSpecs(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("%q: err = %v", tc.in, err)
			continue
		}
		if !tc.err && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestParseBandwidth(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		err  bool
	}{
		{in: "300 GB/s", want: 300e9},
		{in: "200Gb/s", want: 25e9},
		{in: "100 Gbps", want: 12.5e9},
		{in: "12.5 GB/s", want: 12.5e9},
		{in: "1e9", want: 1e9},
		{in: "5 MB/s", want: 5e6},
		{in: "0 GB/s", err: true},
		{in: "-1 GB/s", err: true},
		{in: "fast", err: true},
		{in: "3 GiB/s", err: true},
		{in: "3 furlongs", err: true},
	}
	for _, tc := range tests {
		got, err := ParseBandwidth(tc.in)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("%q: got %g, %v; want %g (err %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestBandwidthConfProblems(t *testing.T) {
	in := "[bandwidth]\nnvlnk = \"1 GB/s\"\ninter = \"fast\"\n[[node]]\nnames = \"n[2-1]\"\nintra = \"1 GB/s\"\n"
	_, ps := ParseBandwidthConf(strings.NewReader(in), "bw.toml")
	wantProblems(t, ps, "bw.toml: bandwidth.nvlnk: unknown key", "bw.toml: bandwidth.inter: bandwidth \"fast\"", "bw.toml: node[0].names")
	_, ps = ParseBandwidthConf(strings.NewReader("[bandwidth\n"), "bw.toml")
	if len(ps) != 1 || ps[0].Line == 0 {
		t.Errorf("syntax error: %v", ps)
	}
}

// TestTopologyCycle checks that a cycle of switches is reported and does
// not hang level computation.
func TestTopologyCycle(t *testing.T) {
	src := memSource{
		"/c/slurm.conf":    "TopologyPlugin=topology/tree\nNodeName=n[1-2]\nPartitionName=p Nodes=ALL",
		"/c/topology.conf": "SwitchName=a Nodes=n1 Switches=c\nSwitchName=b Switches=a\nSwitchName=c Switches=b Nodes=n2\n",
	}
	cfg, err := Load("/c", Options{Source: src})
	if err == nil {
		t.Fatal("no error for a cycle")
	}
	wantProblems(t, cfg.Problems, "switch a is part of a cycle")
}

func TestLoadMissingDir(t *testing.T) {
	cfg, err := Load(filepath.Join(t.TempDir(), "nope"), Options{})
	if err == nil || cfg == nil || cfg.Cluster == nil || !strings.Contains(err.Error(), "slurm.conf") {
		t.Fatalf("cfg %v err %v", cfg, err)
	}
	if _, err := LoadCluster(filepath.Join("testdata", "clusters", "bad-gres")); err == nil {
		t.Error("LoadCluster accepted a bad configuration")
	}
	cl, err := LoadCluster(filepath.Join("testdata", "clusters", "lab"))
	if err != nil || cl.TotalGPUs() != 16 {
		t.Errorf("LoadCluster(lab) = %v, %v", cl, err)
	}
}

// TestLinksOption checks link matrices given from outside gres.conf (an
// `asrpt topo` file).
func TestLinksOption(t *testing.T) {
	dir := filepath.Join("testdata", "clusters", "lab")
	full := [][]int{{-1, 2, 2, 2}, {2, -1, 2, 2}, {2, 2, -1, 2}, {2, 2, 2, -1}}
	cfg, err := Load(dir, Options{Links: []NodeLinks{
		{Node: "node2", Links: full, Source: "node2.json"},
		{Node: "node3", Links: [][]int{{-1}}, Source: "node3.json"},
		{Node: "zz", Links: full, Source: "zz.json"},
	}})
	if err == nil {
		t.Fatal("want errors for node3 and zz")
	}
	if !reflect.DeepEqual(cfg.Cluster.Nodes[1].Links, full) || cfg.Cluster.Nodes[2].Links != nil {
		t.Errorf("links: %v / %v", cfg.Cluster.Nodes[1].Links, cfg.Cluster.Nodes[2].Links)
	}
	wantProblems(t, cfg.Problems, "node3.json: links: node node3: link matrix has 1 rows for 4 GPUs", "zz.json: node: node \"zz\" is not in slurm.conf")
}

// fuzzSource is the in-memory file tree of the slurm.conf and gres.conf
// fuzz targets: the file under test is /f/<name>, and the second fuzz input
// is reachable from it as /f/extra.conf and through the glob conf.d/*.conf,
// which also matches a copy of the file under test (an include cycle one
// glob away). Include, %c, globs, the include bounds and Load all see
// fuzz data.
func fuzzSource(name, main, extra string) memSource {
	return memSource{
		"/f/" + name:              main + "\nInclude extra.conf\n",
		"/f/extra.conf":           extra,
		"/f/conf.d/10-extra.conf": extra,
		"/f/conf.d/20-main.conf":  main,
	}
}

// checkFuzzProblems fails t for a problem without file or message, or
// naming a file that is not in src.
func checkFuzzProblems(t *testing.T, ps Problems, src memSource) {
	t.Helper()
	for _, p := range ps {
		if p.File == "" || p.Msg == "" {
			t.Fatalf("problem without file or message: %+v", p)
		}
		if _, ok := src[p.File]; !ok {
			t.Fatalf("problem in a file that does not exist: %+v", p)
		}
	}
}

// checkFuzzLoad loads /f from src and checks what Load promises: a Config
// whatever the input, an error exactly when a problem is not a warning, a
// model node for every slurm.conf node, and a valid model without error.
func checkFuzzLoad(t *testing.T, src memSource) *Config {
	t.Helper()
	cfg, err := Load("/f", Options{Source: src})
	if cfg == nil || cfg.Slurm == nil || cfg.Cluster == nil {
		t.Fatalf("Load returned %+v", cfg)
	}
	if (err == nil) != (len(cfg.Problems.Errors()) == 0) {
		t.Fatalf("Load error %v with problems %v", err, cfg.Problems)
	}
	if len(cfg.Cluster.Nodes) != len(cfg.Slurm.Nodes) {
		t.Fatalf("%d model nodes for %d slurm.conf nodes", len(cfg.Cluster.Nodes), len(cfg.Slurm.Nodes))
	}
	if err == nil {
		if verr := cfg.Cluster.Validate(); verr != nil {
			t.Fatalf("Load accepted an invalid model: %v", verr)
		}
	}
	checkFuzzProblems(t, cfg.Problems, src)
	return cfg
}

func FuzzParseSlurmConf(f *testing.F) {
	for _, s := range seedFiles(f, "slurm.conf", "common.conf", "10-rack1.conf") {
		f.Add(s, "")
	}
	inc := seedFiles(f, "common.conf")
	f.Add("ClusterName=c\nNodeName=DEFAULT CPUs=4\n", "NodeName=a[1-2] Gres=gpu:x:2\nPartitionName=p Nodes=ALL Default=YES\n")
	f.Add("ClusterName=c\nInclude conf.d/*.conf\nPartitionName=p Nodes=ALL\n", inc[0])
	f.Add("ClusterName=lab\nInclude %c.conf\nInclude /f/extra.conf\n", "Include extra.conf\nInclude ../f/conf.d/*\nNodeName=n1 Gres=gpu:1\n")
	f.Add("", "Include conf.d/*.conf\nInclude conf.d/*.conf\nNodeName=n[1-9999] Gres=gpu:8\n")
	f.Fuzz(func(t *testing.T, main, extra string) {
		fuzzbound.Within(t, time.Second, func() {
			src := fuzzSource("slurm.conf", main, extra)
			c, ps := ParseSlurmConf(strings.NewReader(src["/f/slurm.conf"]), "/f/slurm.conf", src)
			if c == nil {
				t.Fatal("nil config")
			}
			if len(c.Nodes) > 64*MaxHosts {
				t.Fatalf("%d nodes", len(c.Nodes))
			}
			checkFuzzProblems(t, ps, src)
			// Load: the same files, extra also as gres.conf.
			src["/f/gres.conf"] = extra
			cfg := checkFuzzLoad(t, src)
			if len(cfg.Slurm.Nodes) != len(c.Nodes) {
				t.Fatalf("Load read %d nodes, ParseSlurmConf %d", len(cfg.Slurm.Nodes), len(c.Nodes))
			}
		})
	})
}

func FuzzParseGresConf(f *testing.F) {
	for _, s := range seedFiles(f, "gres.conf") {
		f.Add(s, "")
	}
	f.Add("AutoDetect=off\nInclude conf.d/*.conf\n", "NodeName=n[1-2] Name=gpu Type=a100 File=/dev/nvidia[0-3]\n")
	f.Add("NodeName=n1 Name=gpu Count=2\n", "Include extra.conf\nNodeName=n2 Name=gpu File=/dev/nvidia0 Links=-1\n")
	f.Fuzz(func(t *testing.T, main, extra string) {
		fuzzbound.Within(t, time.Second, func() {
			src := fuzzSource("gres.conf", main, extra)
			g, ps := ParseGresConf(strings.NewReader(src["/f/gres.conf"]), "/f/gres.conf", src)
			if g == nil {
				t.Fatal("nil config")
			}
			for _, l := range g.Lines {
				if len(l.Files) > 0 && l.Count != int64(len(l.Files)) {
					t.Fatalf("count %d for %d files", l.Count, len(l.Files))
				}
			}
			checkFuzzProblems(t, ps, src)
			// Load: the same gres.conf beside a fixed slurm.conf.
			src["/f/slurm.conf"] = "NodeName=n[1-4] Gres=gpu:a100:4\nPartitionName=p Nodes=ALL\n"
			cfg := checkFuzzLoad(t, src)
			if cfg.Gres == nil || len(cfg.Gres.Lines) != len(g.Lines) {
				t.Fatalf("Load read gres.conf as %+v, ParseGresConf as %d lines", cfg.Gres, len(g.Lines))
			}
		})
	})
}

func FuzzParseTopologyConf(f *testing.F) {
	for _, s := range seedFiles(f, "topology.conf", "switches.conf") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbound.Within(t, time.Second, func() {
			tc, _ := ParseTopologyConf(strings.NewReader(s), "topology.conf", nil)
			seen := map[string]bool{}
			for _, sw := range tc.Switches {
				if seen[sw.Name] {
					t.Fatalf("switch %s twice", sw.Name)
				}
				seen[sw.Name] = true
			}
			// The tree check must terminate on whatever the parser accepted.
			src := memSource{"/f/slurm.conf": "NodeName=n[1-8]\nTopologyPlugin=topology/tree", "/f/topology.conf": s}
			if _, err := Load("/f", Options{Source: src}); err != nil {
				_ = err
			}
		})
	})
}

// seedFiles returns the contents of the named files found under
// testdata/clusters.
func seedFiles(f *testing.F, names ...string) []string {
	var out []string
	err := filepath.WalkDir(filepath.Join("testdata", "clusters"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		for _, n := range names {
			if d.Name() == n {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				out = append(out, string(b))
			}
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	return out
}

// writeLargeConfig writes a configuration of racks×perRack 8-GPU nodes
// with gres.conf Links and a two-level topology.conf.
func writeLargeConfig(tb testing.TB, dir string, racks, perRack int) {
	tb.Helper()
	var sc, gc, tc strings.Builder
	sc.WriteString("ClusterName=big\nGresTypes=gpu\nTopologyPlugin=topology/tree\nSelectType=select/cons_tres\n")
	sc.WriteString("NodeName=DEFAULT CPUs=128 RealMemory=1000000 Gres=gpu:h100:8\n")
	for r := 0; r < racks; r++ {
		fmt.Fprintf(&sc, "NodeName=r%03dn[001-%03d]\n", r, perRack)
		fmt.Fprintf(&tc, "SwitchName=leaf%03d Nodes=r%03dn[001-%03d] LinkSpeed=400\n", r, r, perRack)
	}
	fmt.Fprintf(&tc, "SwitchName=spine Switches=leaf[000-%03d]\n", racks-1)
	sc.WriteString("PartitionName=all Nodes=ALL Default=YES\n")
	for i := 0; i < 8; i++ {
		links := make([]string, 8)
		for j := range links {
			links[j] = "18"
		}
		links[i] = "-1"
		fmt.Fprintf(&gc, "Name=gpu Type=h100 File=/dev/nvidia%d Links=%s\n", i, strings.Join(links, ","))
	}
	for name, b := range map[string]*strings.Builder{"slurm.conf": &sc, "gres.conf": &gc, "topology.conf": &tc} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

func TestLoadLarge(t *testing.T) {
	dir := t.TempDir()
	writeLargeConfig(t, dir, 16, 32)
	cfg, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cfg.Cluster.Nodes); n != 512 || cfg.Cluster.TotalGPUs() != 4096 || len(cfg.Cluster.Switches) != 17 {
		t.Fatalf("%d nodes, %d GPUs, %d switches", n, cfg.Cluster.TotalGPUs(), len(cfg.Cluster.Switches))
	}
}

// BenchmarkLoad loads a 4096-node (32768-GPU) configuration.
func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	writeLargeConfig(b, dir, 64, 64)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(dir, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
