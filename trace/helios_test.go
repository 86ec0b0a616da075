package trace

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/job"
)

const heliosHeader = "u_id,user,gpu_num,cpu_num,node_num,interval,run_time,wall_time,new_status\n"

func TestReadHelios(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []job.Job
		stats Stats
	}{
		{"intervals accumulate across skipped CPU jobs", heliosHeader +
			"0,1,1,1,1,0,84,0,Pass\n1,1,0,4,1,94,87,0,Pass\n2,2,8,64,1,6,30,0,Failed\n3,3,16,0,2,0,5,0,Killed\n",
			[]job.Job{
				{ID: "0", Submit: HeliosEpoch, User: "u1", GPUs: 1, Nodes: 1, RunTime: 84, State: "COMPLETED"},
				{ID: "2", Submit: HeliosEpoch + 100, User: "u2", GPUs: 8, Nodes: 1, RunTime: 30, State: "FAILED"},
				{ID: "3", Submit: HeliosEpoch + 100, User: "u3", GPUs: 16, Nodes: 2, RunTime: 5, State: "CANCELLED"},
			},
			Stats{Rows: 4, Jobs: 3, NoGPU: 1}},
		{"zero run time skipped, columns reordered, no u_id", "run_time,interval,gpu_num,user,new_status\n10,5,1,7,Pass\n0,5,1,7,Killed\n3,1,2,8,Requeued\n",
			[]job.Job{
				{ID: "0", Submit: HeliosEpoch + 5, User: "u7", GPUs: 1, RunTime: 10, State: "COMPLETED"},
				{ID: "2", Submit: HeliosEpoch + 11, User: "u8", GPUs: 2, RunTime: 3, State: "REQUEUED"},
			},
			Stats{Rows: 3, Jobs: 2, NotRun: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st, err := ReadStats(strings.NewReader(tc.input), "h.csv", Helios, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkJobs(t, got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			if st != tc.stats {
				t.Errorf("stats %+v, want %+v", st, tc.stats)
			}
		})
	}
}

func TestReadHeliosBad(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		line   int
		field  string
		is     error
		noPErr bool
	}{
		{"negative GPUs", heliosHeader + "0,1,1,1,1,0,84,0,Pass\n1,1,-1,1,1,0,84,0,Pass\n", 3, "gpu_num", ErrValue, false},
		{"GPUs not a number", heliosHeader + "0,1,x,1,1,0,84,0,Pass\n", 2, "gpu_num", nil, false},
		{"negative run time", heliosHeader + "0,1,1,1,1,0,-84,0,Pass\n", 2, "run_time", ErrValue, false},
		{"negative interval", heliosHeader + "0,1,1,1,1,-3,84,0,Pass\n", 2, "interval", ErrValue, false},
		{"empty interval", heliosHeader + "0,1,1,1,1,,84,0,Pass\n", 2, "interval", nil, false},
		{"empty user", heliosHeader + "0,,1,1,1,0,84,0,Pass\n", 2, "user", nil, false},
		{"bad node count", heliosHeader + "0,1,1,1,two,0,84,0,Pass\n", 2, "node_num", nil, false},
		{"duplicate id", heliosHeader + "0,1,1,1,1,0,84,0,Pass\n0,1,1,1,1,0,84,0,Pass\n", 3, "u_id", ErrValue, false},
		{"short row", heliosHeader + "0,1,1,1,1,0,84\n", 2, "", nil, false},
		{"missing column", "u_id,user,gpu_num,interval\n0,1,1,0\n", 1, "run_time", ErrHeader, false},
		{"column twice", "user,gpu_num,interval,run_time,user\n", 1, "user", ErrHeader, false},
		{"empty", "", 0, "", ErrEmpty, true},
		{"header only", heliosHeader, 0, "", ErrEmpty, true},
		{"only CPU jobs", heliosHeader + "0,1,0,1,1,0,84,0,Pass\n", 0, "", ErrEmpty, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := Read(strings.NewReader(tc.input), "h.csv", Helios)
			if err == nil {
				t.Fatalf("no error; got %+v", jobs)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q does not wrap %v", err, tc.is)
			}
			if tc.noPErr {
				return
			}
			pe := parseErr(t, err)
			if pe.File != "h.csv" || pe.Line != tc.line || pe.Field != tc.field {
				t.Errorf("error at %s:%d field %q, want h.csv:%d field %q (%v)", pe.File, pe.Line, pe.Field, tc.line, tc.field, err)
			}
		})
	}
}

// sharedTrace returns the path of an excerpt of a public trace in the
// directory $ASRPT_TRACES (quality/README.md), skipping the test when the
// variable is unset or the file absent.
func sharedTrace(t testing.TB, dir, file string) string {
	t.Helper()
	root := os.Getenv("ASRPT_TRACES")
	if root == "" {
		t.Skip("ASRPT_TRACES (a directory of public trace excerpts) not set")
	}
	p := filepath.Join(root, dir, file)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared trace not available: %v", err)
	}
	return p
}

// TestReadHeliosExcerpts reads the public excerpts and checks the counts
// their READMEs state (15,000 rows; Helios 4,204 CPU jobs; Philly none).
func TestReadHeliosExcerpts(t *testing.T) {
	tests := []struct {
		dir, file string
		noGPU     int
		span      float64 // seconds from first to last submission, about
	}{
		{"helios-15k-excerpt", "helios_data_training.csv", 4204, 1.74e6},
		{"philly-15k-excerpt", "philly_data_training.csv", 0, 4.98e6},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			jobs, st, err := ReadFileStats(sharedTrace(t, tc.dir, tc.file), Helios, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkJobs(t, jobs)
			if st.Rows != 15000 || st.NoGPU != tc.noGPU || st.Jobs != 15000-tc.noGPU || st.NotRun != 0 {
				t.Errorf("stats %v, want 15000 rows and %d CPU jobs skipped", st, tc.noGPU)
			}
			if jobs[0].Submit != HeliosEpoch {
				t.Errorf("first submit %v, want the epoch %d", jobs[0].Submit, HeliosEpoch)
			}
			span := jobs[len(jobs)-1].Submit - jobs[0].Submit
			if span < 0.98*tc.span || span > 1.02*tc.span {
				t.Errorf("span %.0f s, want about %.0f s", span, tc.span)
			}
			states := map[string]int{}
			for _, j := range jobs {
				states[j.State]++
			}
			t.Logf("%s: %v; span %.2f days; states %v", tc.dir, st, span/86400, states)
			for s := range states {
				if s != "COMPLETED" && s != "FAILED" && s != "CANCELLED" {
					t.Errorf("unexpected state %q", s)
				}
			}
		})
	}
}
