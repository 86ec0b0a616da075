package trace

import (
	"bytes"
	"os"
	"testing"

	"github.com/asrpt/asrpt/job"
)

// benchTrace returns a generated trace of n jobs in native CSV and JSON Lines.
func benchTrace(b *testing.B, n int) (csvData, jsonl []byte) {
	b.Helper()
	cfg := DefaultGenConfig()
	cfg.Jobs, cfg.ClusterGPUs = n, 8000
	jobs, err := Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	var c, j bytes.Buffer
	if err := WriteCSV(&c, jobs); err != nil {
		b.Fatal(err)
	}
	if err := WriteJSONL(&j, jobs); err != nil {
		b.Fatal(err)
	}
	return c.Bytes(), j.Bytes()
}

// BenchmarkReadNative reads a 100,000-job native trace; ns/job is the
// figure to compare (a 1M-job trace costs ten times one op).
func BenchmarkReadNative(b *testing.B) {
	const n = 100000
	csvData, jsonl := benchTrace(b, n)
	for _, tc := range []struct {
		name string
		data []byte
	}{{"csv", csvData}, {"jsonl", jsonl}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.data)))
			b.ReportAllocs()
			for b.Loop() {
				jobs, err := Read(bytes.NewReader(tc.data), "bench."+tc.name, Native)
				if err != nil || len(jobs) != n {
					b.Fatal(len(jobs), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/job")
		})
	}
}

func BenchmarkWriteCSV(b *testing.B) {
	cfg := DefaultGenConfig()
	cfg.Jobs = 100000
	jobs, err := Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := WriteCSV(&buf, jobs); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

// BenchmarkReadHeliosExcerpt reads the 15,000-row Helios excerpt.
func BenchmarkReadHeliosExcerpt(b *testing.B) {
	data, err := os.ReadFile(sharedTrace(b, "helios-15k-excerpt", "helios_data_training.csv"))
	if err != nil {
		b.Fatal(err)
	}
	var jobs []job.Job
	for b.Loop() {
		if jobs, err = Read(bytes.NewReader(data), "helios.csv", Helios); err != nil {
			b.Fatal(err)
		}
	}
	_ = jobs
}
