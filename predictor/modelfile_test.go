package predictor

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
)

func smallModel(t testing.TB) *Model {
	t.Helper()
	cfg := DefaultTrainConfig()
	cfg.Forest.Trees, cfg.Forest.MinSamplesLeaf, cfg.Forest.MaxSamples = 8, 5, 300
	m, err := Train(recurring(400, 2), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestModelFileRoundTrip(t *testing.T) {
	m := smallModel(t)
	path := filepath.Join(t.TempDir(), "m.rf")
	if err := m.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Config != m.Config || got.TrainRows != m.TrainRows {
		t.Errorf("config %+v/%d, want %+v/%d", got.Config, got.TrainRows, m.Config, m.TrainRows)
	}
	rows := BuildRows(recurring(300, 9))
	a, b := m.PredictRows(rows), got.PredictRows(rows)
	ea, ma := m.PredictRowsBoth(rows)
	eb, mb := got.PredictRowsBoth(rows)
	for i := range a {
		if a[i] != b[i] || ma[i] != a[i] || mb[i] != a[i] {
			t.Fatalf("row %d: median %g before saving, %g after (both outputs: %g, %g)", i, a[i], b[i], ma[i], mb[i])
		}
		if ea[i] != eb[i] {
			t.Fatalf("row %d: expected %g before saving, %g after", i, ea[i], eb[i])
		}
		e1, m1 := got.PredictBoth(&rows[i])
		if e1 != eb[i] || m1 != mb[i] || got.Predict(&rows[i]) != m1 {
			t.Fatalf("row %d: one row (%g, %g), batch (%g, %g)", i, e1, m1, eb[i], mb[i])
		}
	}
	for ti := range m.Forest.Means {
		if !slices.Equal(m.Forest.Means[ti], got.Forest.Means[ti]) {
			t.Fatalf("tree %d: leaf expected values differ after loading", ti)
		}
	}
}

// rewriteHeader returns data with its JSON header changed by f and the
// checksum fixed.
func rewriteHeader(t *testing.T, data []byte, f func(h map[string]any)) []byte {
	t.Helper()
	le := binary.LittleEndian
	hl := le.Uint32(data[12:])
	var h map[string]any
	if err := json.Unmarshal(data[16:16+hl], &h); err != nil {
		t.Fatal(err)
	}
	f(h)
	nh, _ := json.Marshal(h)
	out := append([]byte{}, data[:12]...)
	out = le.AppendUint32(out, uint32(len(nh)))
	out = append(out, nh...)
	out = append(out, data[16+hl:len(data)-4]...)
	return le.AppendUint32(out, crc32.ChecksumIEEE(out))
}

func TestModelFileRefusesMismatch(t *testing.T) {
	var buf bytes.Buffer
	if _, err := smallModel(t).WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for _, tc := range []struct {
		name   string
		data   []byte
		schema bool
		msg    string
	}{
		{"schema version", rewriteHeader(t, data, func(h map[string]any) { h["schema_version"] = 99 }), true,
			fmt.Sprintf("schema version 99 in the file, %d in this build", SchemaVersion)},
		{"renamed feature", rewriteHeader(t, data, func(h map[string]any) { h["features"].([]any)[7] = "gpu_count" }), true,
			`feature 7 is "gpu_count" in the file, "log_limit" in this build`},
		{"missing feature", rewriteHeader(t, data, func(h map[string]any) { f := h["features"].([]any); h["features"] = f[:len(f)-1] }), true,
			fmt.Sprintf("%d features in the file, %d in this build", len(FeatureNames())-1, len(FeatureNames()))},
		{"layout version", func() []byte {
			d := append([]byte{}, data...)
			binary.LittleEndian.PutUint32(d[8:], 7)
			return d
		}(), false, "file layout version 7, this build reads version 2"},
		// A version 1 file has medians only: refused, not misread.
		{"version 1 (no expected values)", func() []byte {
			d := append([]byte{}, data...)
			binary.LittleEndian.PutUint32(d[8:], 1)
			return d
		}(), false, "file layout version 1, this build reads version 2"},
		{"flipped byte", func() []byte { d := append([]byte{}, data...); d[len(d)/2] ^= 1; return d }(), false, "checksum"},
		{"truncated", data[:len(data)-9], false, "checksum"},
		{"not a model", []byte("id,submit\n1,2\n"), false, "not an asrpt model file"},
		{"unknown header field", rewriteHeader(t, data, func(h map[string]any) { h["extra"] = 1 }), false, "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeModel(tc.data)
			if !errors.Is(err, ErrModelFile) || errors.Is(err, ErrSchema) != tc.schema {
				t.Fatalf("error %v: want ErrModelFile, ErrSchema=%v", err, tc.schema)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
		})
	}
}

func TestDecodeRejectsBadTrees(t *testing.T) {
	var buf bytes.Buffer
	if _, err := smallModel(t).WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	le := binary.LittleEndian
	hl := le.Uint32(data[12:])
	first := 16 + int(hl) + 4 // the first node of the first tree
	nodes := int(le.Uint32(data[16+hl:]))
	firstLeaf := -1 // the first leaf node of the first tree
	for k := 0; k < nodes; k++ {
		if int32(le.Uint32(data[first+16*k+12:])) < 0 {
			firstLeaf = first + 16*k
			break
		}
	}
	means := first + 16*nodes // the first tree's leaf expected values
	for _, tc := range []struct {
		name string
		off  int
		val  uint64
		wide bool // write val as 8 bytes, else as 4
		msg  string
	}{
		{"feature out of range", first + 12, 1000, false, "bad split (feature 1000"},
		{"right child wrong", first + 8, 1, false, "right child 1"},
		{"NaN threshold", first + 4, 0x7ff80000, false, "threshold NaN"},
		{"leaf index wrong", firstLeaf + 8, 5, false, "leaf index 5, want 0"},
		{"NaN expected value", means, math.Float64bits(math.NaN()), true, "expected value NaN"},
		{"negative expected value", means, math.Float64bits(-1), true, "expected value -1 "},
		{"zero expected value", means, 0, true, "expected value 0 "},
		{"infinite expected value", means, math.Float64bits(math.Inf(1)), true, "expected value +Inf"},
	} {
		d := append([]byte{}, data[:len(data)-4]...)
		if tc.wide {
			le.PutUint64(d[tc.off:], tc.val)
		} else {
			le.PutUint32(d[tc.off:], uint32(tc.val))
		}
		d = le.AppendUint32(d, crc32.ChecksumIEEE(d))
		_, err := DecodeModel(d)
		if !errors.Is(err, ErrModelFile) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want ErrModelFile saying %q", tc.name, err, tc.msg)
		}
	}
}

func FuzzDecodeModel(f *testing.F) {
	var buf bytes.Buffer
	cfg := DefaultTrainConfig()
	cfg.Forest.Trees, cfg.Forest.MaxDepth = 2, 3
	m, err := Train(recurring(100, 1), cfg)
	if err != nil {
		f.Fatal(err)
	}
	m.WriteTo(&buf)
	f.Add(buf.Bytes())
	if m, err = Train(withCommands(100, 1), cfg); err != nil { // with the optional features
		f.Fatal(err)
	}
	buf.Reset()
	m.WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(fileMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbound.Within(t, time.Second, func() {
			// Fix the checksum so the fuzzer reaches the parser behind it.
			if len(data) >= 4 {
				data = binary.LittleEndian.AppendUint32(append([]byte{}, data[:len(data)-4]...), crc32.ChecksumIEEE(data[:len(data)-4]))
			}
			m, err := DecodeModel(data)
			if err != nil {
				if !errors.Is(err, ErrModelFile) {
					t.Fatalf("error %v does not wrap ErrModelFile", err)
				}
				return
			}
			// A decoded model must predict without panicking.
			r := Row{Num: make([]float64, NumNum), Opt: Optional{Command: 1, Cmd: GroupStats{Count: 3, Last: 4, Median: 5}}}
			for i := range r.Num {
				r.Num[i] = math.NaN()
			}
			m.Predict(&r)
			m.PredictBoth(&r)
			m.PredictRows([]Row{r})
			m.PredictRowsBoth([]Row{r})
		})
	})
}

// TestModelBothOutputs trains on jobs of one group whose baseline (group
// median) is 100 s: 70% run 100 s, 30% run 10,000 s (mean 3,070 s). The
// model's median is 100 s and its expected run time the mean, also when
// the long runs are failures left out of the median's training. The
// first job, without any history (baseline DefaultLimit, a guess), must
// not weigh in the expectation.
func TestModelBothOutputs(t *testing.T) {
	n := 1000
	rows := make([]Row, n)
	y := make([]float64, n)
	failed := make([]bool, n)
	for i := range rows {
		num := make([]float64, NumNum)
		for k := range num {
			num[k] = math.NaN()
		}
		rows[i] = Row{Cat: [NumCat]string{"train", "u", "lab", "gpu", ""}, Num: num,
			Group: GroupStats{Count: 50, Median: math.Log(100)}, All: GroupStats{Count: 50, Median: math.Log(100)}}
		if i == 0 {
			rows[i].Group, rows[i].All = emptyStats(), emptyStats()
		}
		y[i] = math.Log(100)
		if i%10 < 3 {
			y[i], failed[i] = math.Log(10000), true
		}
	}
	for _, tc := range []struct {
		name       string
		failWeight float64
		residual   bool
	}{
		{"residual", 1, true},
		{"residual, failures out of the median", 0, true},
		{"log run time target", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultTrainConfig()
			cfg.Forest.Trees, cfg.FailWeight, cfg.Residual = 40, tc.failWeight, tc.residual
			m, err := TrainRows(rows, y, failed, cfg)
			if err != nil {
				t.Fatal(err)
			}
			exp, med := m.PredictBoth(&rows[1])
			if math.Abs(med-100) > 1e-6 || math.Abs(exp/3070-1) > 0.03 {
				t.Errorf("expected %g s (want 3070), median %g s (want 100)", exp, med)
			}
			be, bm := m.PredictRowsBoth(rows[1:3])
			if be[0] != exp || bm[0] != med {
				t.Errorf("batch (%g, %g), one row (%g, %g)", be[0], bm[0], exp, med)
			}
		})
	}
}
