package trace

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/job"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in      string
		want    Format
		wantErr bool
	}{
		{"native", Native, false},
		{"SACCT", Sacct, false},
		{" helios ", Helios, false},
		{"philly", "", true},
		{"", "", true},
	}
	for _, tc := range tests {
		got, err := ParseFormat(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if tc.wantErr && !errors.Is(err, ErrFormat) {
			t.Errorf("ParseFormat(%q) error %v does not wrap ErrFormat", tc.in, err)
		}
	}
}

func TestReadUnknownFormat(t *testing.T) {
	_, err := Read(strings.NewReader("id,submit,gpus,run_time\n1,0,1,1\n"), "x.csv", Format("slurmdb"))
	if !errors.Is(err, ErrFormat) {
		t.Fatalf("Read with an unknown format: %v, want ErrFormat", err)
	}
}

func TestCompareIDs(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"9", "10", -1},
		{"10", "9", 1},
		{"123_4", "123_10", -1},
		{"123_10", "123_10", 0},
		{"007", "7", 1}, // same value: fewer leading zeros first
		{"a", "b", -1},
		{"job2", "job10", -1},
		{"", "1", -1},
		{"12", "12a", -1},
	}
	for _, tc := range tests {
		if got := CompareIDs(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareIDs(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := CompareIDs(tc.b, tc.a); got != -tc.want {
			t.Errorf("CompareIDs(%q, %q) = %d, want %d (antisymmetry)", tc.b, tc.a, got, -tc.want)
		}
	}
}

func TestSortStable(t *testing.T) {
	jobs := []job.Job{
		{ID: "10", Submit: 5}, {ID: "9", Submit: 5}, {ID: "3", Submit: 1}, {ID: "x", Submit: 5, Name: "first"}, {ID: "x", Submit: 5, Name: "second"},
	}
	Sort(jobs)
	var got []string
	for _, j := range jobs {
		got = append(got, j.ID+j.Name)
	}
	want := "3 9 10 xfirst xsecond"
	if strings.Join(got, " ") != want {
		t.Errorf("Sort order %v, want %s", got, want)
	}
}

// parseErr returns the *ParseError inside err or fails the test.
func parseErr(t *testing.T, err error) *ParseError {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *ParseError", err, err)
	}
	return pe
}

// checkJobs asserts the reader contract on a successful result.
func checkJobs(t *testing.T, jobs []job.Job) {
	t.Helper()
	if len(jobs) == 0 {
		t.Fatal("no jobs and no error")
	}
	for i := range jobs {
		j := &jobs[i]
		if j.ID == "" || j.GPUs <= 0 || !(j.RunTime > 0) || !finite(j.Submit) || j.TimeLimit < 0 {
			t.Fatalf("job %d violates the reader contract: %+v", i, *j)
		}
		if !(j.Submit >= 0 && j.Submit <= MaxSubmit) || j.RunTime > MaxRunTime || j.TimeLimit > MaxRunTime ||
			!(j.Iterations >= 0 && j.Iterations <= MaxIterations) {
			t.Fatalf("job %d outside the readers' limits: %+v", i, *j)
		}
		if i > 0 && (jobs[i-1].Submit > j.Submit || jobs[i-1].Submit == j.Submit && CompareIDs(jobs[i-1].ID, j.ID) > 0) {
			t.Fatalf("jobs %d and %d out of order: %+v, %+v", i-1, i, jobs[i-1], *j)
		}
	}
}

func nan() float64 { var z float64; return z / z }

func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadTableFileCancelled: a done context stops the read with its
// error, naming nothing half read.
func TestReadTableFileCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(path, []byte("id,submit,user,gpus,run_time\n1,10,u,1,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tab, _, err := ReadTableFile(ctx, path, Native, Options{})
	if !errors.Is(err, context.Canceled) || tab != nil {
		t.Errorf("cancelled read: %v, %v", tab, err)
	}
	if tab, _, err := ReadTableFile(context.Background(), path, Native, Options{}); err != nil || tab.Len() != 1 {
		t.Errorf("read: %v, %v", tab, err)
	}
}
