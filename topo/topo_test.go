package topo

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// checkGolden compares the text report, the gres.conf lines and the JSON
// file of top with testdata/<name>.golden, and checks that the JSON reads
// back to the same topology.
func checkGolden(t *testing.T, top *Topology, name string) {
	t.Helper()
	var b bytes.Buffer
	if err := top.Text(&b); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\n# gres.conf\n")
	for _, l := range top.GresLines("") {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n# json\n")
	var js bytes.Buffer
	if err := top.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	b.Write(js.Bytes())
	back, err := ReadJSON(bytes.NewReader(js.Bytes()), name+".json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, top) {
		t.Errorf("JSON round trip changed the topology:\n%+v\n%+v", back, top)
	}
	golden := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(want, b.Bytes()) {
		t.Errorf("%s differs from golden (run with -update after checking):\n%s", name, b.String())
	}
}

func TestCPUList(t *testing.T) {
	tests := []struct {
		mask []uint64
		want string
	}{
		{nil, ""},
		{[]uint64{0}, ""},
		{[]uint64{0xFFFF}, "0-15"},
		{[]uint64{0xFFFF | 0xFFFF<<32}, "0-15,32-47"},
		{[]uint64{1 << 63, 1}, "63-64"},
		{[]uint64{0b1011}, "0-1,3"},
		{[]uint64{^uint64(0), ^uint64(0)}, "0-127"},
	}
	for _, tc := range tests {
		if got := CPUList(tc.mask); got != tc.want {
			t.Errorf("CPUList(%x) = %q, want %q", tc.mask, got, tc.want)
		}
	}
}

func TestNormalizeBusID(t *testing.T) {
	for in, want := range map[string]string{
		"00000000:07:00.0":     "0000:07:00.0",
		"0000:B1:00.0":         "0000:b1:00.0",
		"00000001:07:00.0\x00": "0001:07:00.0",
		"garbage":              "garbage",
	} {
		if got := NormalizeBusID(in); got != want {
			t.Errorf("NormalizeBusID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGresType(t *testing.T) {
	for in, want := range map[string]string{
		"NVIDIA A100-SXM4-40GB":      "a100",
		"NVIDIA H100 80GB HBM3":      "h100",
		"Tesla V100-SXM2-16GB":       "v100",
		"NVIDIA GeForce RTX 4090":    "rtx4090",
		"Mock NVIDIA A100-SXM4-40GB": "a100",
		"Tesla T4":                   "t4",
		"":                           "gpu",
	} {
		if got := GresType(in); got != want {
			t.Errorf("GresType(%q) = %q, want %q", in, got, want)
		}
	}
}

func sample() *Topology {
	return &Topology{
		Version: Version, Node: "n1",
		GPUs: []GPU{
			{Index: 0, Minor: 0, UUID: "GPU-a", PCIBusID: "0000:07:00.0", Model: "NVIDIA A100-SXM4-40GB", CPUAffinity: "0-15", NVLinks: 4},
			{Index: 1, Minor: 1, UUID: "GPU-b", PCIBusID: "0000:0f:00.0", Model: "NVIDIA A100-SXM4-40GB", CPUAffinity: "0-15", NVLinks: 4},
		},
		Links: [][]int{{-1, 4}, {4, -1}},
		PCIe:  [][]string{{PCIeSame, PCIeSingle}, {PCIeSingle, PCIeSame}},
	}
}

func TestReadJSONErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not json", "{", "x.json"},
		{"unknown field", `{"version":1,"node":"n","gpus":[],"links":[],"colour":1}`, "unknown field"},
		{"bad version", `{"version":7,"node":"n","gpus":[],"links":[]}`, "version 7"},
		{"no node", `{"version":1,"gpus":[],"links":[]}`, "node name"},
		{"rows", `{"version":1,"node":"n","gpus":[{"index":0}],"links":[]}`, "0 rows for 1 GPUs"},
		{"diagonal", `{"version":1,"node":"n","gpus":[{"index":0}],"links":[[3]]}`, "links[0][0] = 3"},
		{"index", `{"version":1,"node":"n","gpus":[{"index":4}],"links":[[-1]]}`, "has index 4"},
	}
	for _, tc := range tests {
		_, err := ReadJSON(strings.NewReader(tc.in), "x.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "x.json") {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestGresLinesSample(t *testing.T) {
	got := sample().GresLines("")
	want := []string{
		"NodeName=n1 Name=gpu Type=a100 File=/dev/nvidia0 Cores=0-15 Links=-1,4",
		"NodeName=n1 Name=gpu Type=a100 File=/dev/nvidia1 Cores=0-15 Links=4,-1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func FuzzReadJSON(f *testing.F) {
	var b bytes.Buffer
	if err := sample().WriteJSON(&b); err != nil {
		f.Fatal(err)
	}
	f.Add(b.String())
	f.Add(`{"version":1,"node":"n","gpus":[],"links":[]}`)
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbound.Within(t, time.Second, func() {
			top, err := ReadJSON(strings.NewReader(s), "f.json")
			if err != nil {
				return
			}
			// Whatever is accepted must be usable without panics.
			var out bytes.Buffer
			if err := top.Text(&out); err != nil {
				t.Fatal(err)
			}
			top.GresLines("")
		})
	})
}

// TestSampleGolden covers the report of a hand-written topology, so that
// the text format is checked in builds without cgo too.
func TestSampleGolden(t *testing.T) {
	checkGolden(t, sample(), "sample")
}
