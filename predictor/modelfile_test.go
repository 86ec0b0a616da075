package predictor

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"math"
	"path/filepath"
	"strings"
	"testing"
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
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("row %d: %g before saving, %g after", i, a[i], b[i])
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
			"schema version 99 in the file, 1 in this build"},
		{"renamed feature", rewriteHeader(t, data, func(h map[string]any) { h["features"].([]any)[7] = "gpu_count" }), true,
			`feature 7 is "gpu_count" in the file, "log_limit" in this build`},
		{"missing feature", rewriteHeader(t, data, func(h map[string]any) { f := h["features"].([]any); h["features"] = f[:len(f)-1] }), true,
			"26 features in the file, 27 in this build"},
		{"layout version", func() []byte {
			d := append([]byte{}, data...)
			binary.LittleEndian.PutUint32(d[8:], 7)
			return d
		}(), false, "file layout version 7, this build reads version 1"},
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
	hl := binary.LittleEndian.Uint32(data[12:])
	first := 16 + int(hl) + 4 // the first node of the first tree
	for _, tc := range []struct {
		name string
		off  int
		val  uint32
	}{
		{"feature out of range", first + 12, 1000},
		{"right child wrong", first + 8, 1},
		{"NaN threshold", first + 4, 0x7ff80000},
	} {
		d := append([]byte{}, data[:len(data)-4]...)
		binary.LittleEndian.PutUint32(d[tc.off:], tc.val)
		d = binary.LittleEndian.AppendUint32(d, crc32.ChecksumIEEE(d))
		if _, err := DecodeModel(d); !errors.Is(err, ErrModelFile) {
			t.Errorf("%s: error %v, want ErrModelFile", tc.name, err)
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
	f.Add([]byte(fileMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
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
		r := Row{Num: make([]float64, NumNum)}
		for i := range r.Num {
			r.Num[i] = math.NaN()
		}
		m.Predict(&r)
		m.PredictRows([]Row{r})
	})
}
