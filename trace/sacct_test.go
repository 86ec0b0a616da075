package trace

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // Europe/Berlin on machines without zoneinfo

	"github.com/asrpt/asrpt/job"
)

// utc returns the Unix time of an RFC 3339 string.
func utc(t *testing.T, s string) float64 {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return float64(tm.Unix())
}

func TestReadSacctFiles(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file  string
		opt   Options
		want  []job.Job
		stats Stats
	}{
		{
			file: "recommended.txt",
			want: []job.Job{
				{ID: "1001", Submit: utc(t, "2026-11-01T09:00:00Z"), User: "alice", Name: "train-bert-2026-11-01-run3", Account: "nlp", Partition: "gpu", QOS: "normal",
					GPUs: 4, Nodes: 1, RunTime: 3600, TimeLimit: 7200, State: "COMPLETED"},
				{ID: "1002", Submit: utc(t, "2026-11-01T09:30:00Z"), User: "bob", Name: "pretrain-gpt", Account: "vision", Partition: "gpu", QOS: "high",
					GPUs: 16, Nodes: 2, RunTime: 86400, TimeLimit: 86400, State: "TIMEOUT"},
				{ID: "1005", Submit: utc(t, "2026-11-01T10:12:00Z"), User: "alice", Name: "sweep", Account: "nlp", Partition: "gpu", QOS: "normal",
					GPUs: 1, Nodes: 1, RunTime: 1200, TimeLimit: 0, State: "CANCELLED"},
				{ID: "1020", Submit: utc(t, "2026-11-01T11:00:00Z"), User: "dave", Name: "eval", Account: "vision", Partition: "gpu", QOS: "normal",
					GPUs: 2, Nodes: 1, RunTime: 30, TimeLimit: 1800, State: "FAILED"},
				{ID: "1030", Submit: utc(t, "2026-11-01T12:00:00Z"), User: "erin", Name: "hp-sweep", Account: "nlp", Partition: "gpu", QOS: "normal",
					GPUs: 1, Nodes: 1, RunTime: 600, TimeLimit: 1800, State: "COMPLETED"},
				{ID: "1031", Submit: utc(t, "2026-11-01T12:00:00Z"), User: "erin", Name: "hp-sweep", Account: "nlp", Partition: "gpu", QOS: "normal",
					GPUs: 1, Nodes: 1, RunTime: 720, TimeLimit: 1800, State: "OUT_OF_MEMORY"},
			},
			stats: Stats{Rows: 13, Jobs: 6, Steps: 3, NoGPU: 1, Unfinished: 2, NotRun: 1},
		},
		{
			file: "elapsed-jobid-tz.txt",
			opt:  Options{Location: berlin}, // 2026-03-29: clocks go from 02:00 CET to 03:00 CEST
			want: []job.Job{
				{ID: "2000_1", Submit: utc(t, "2026-03-28T23:30:00Z"), User: "frank", Name: "arr", GPUs: 8, Nodes: 3, RunTime: 3600, TimeLimit: 86400, State: "COMPLETED", ArrayJobID: "2000"},
				{ID: "2000_10", Submit: utc(t, "2026-03-28T23:30:00Z"), User: "frank", Name: "arr", GPUs: 1, Nodes: 1, RunTime: 93784, TimeLimit: 300, State: "COMPLETED", ArrayJobID: "2000"},
				{ID: "2000_2", Submit: utc(t, "2026-03-29T01:30:00Z"), User: "frank", Name: "arr", GPUs: 1, Nodes: 1, RunTime: 600, TimeLimit: 5400, State: "COMPLETED", ArrayJobID: "2000"},
			},
			stats: Stats{Rows: 4, Jobs: 3, Steps: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got, st, err := ReadFileStats(filepath.Join("testdata", "sacct", tc.file), Sacct, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			checkJobs(t, got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("jobs:\n got  %+v\n want %+v", got, tc.want)
			}
			if st != tc.stats {
				t.Errorf("stats %+v, want %+v", st, tc.stats)
			}
			if st.Skipped() != st.Steps+st.NoGPU+st.Unfinished+st.NotRun+st.Duplicates {
				t.Errorf("skip counts %+v do not add up", st)
			}
		})
	}
}

func TestReadSacctCases(t *testing.T) {
	const head = "JobID|JobName|User|Submit|ElapsedRaw|AllocTRES|State\n"
	const hetHead = "JobIDRaw|JobID|JobName|User|Submit|ElapsedRaw|AllocTRES|State\n"
	tests := []struct {
		name  string
		opt   Options
		input string
		want  []job.Job
		stats Stats
	}{
		{"duplicate id: last row wins", Options{}, head +
			"5|a|u|2026-01-01T00:00:00|10|gres/gpu=1|NODE_FAIL\n5|a|u|2026-01-01T00:00:00|20|gres/gpu=1|COMPLETED\n",
			[]job.Job{{ID: "5", Name: "a", User: "u", Submit: utc(t, "2026-01-01T00:00:00Z"), GPUs: 1, RunTime: 20, State: "COMPLETED"}},
			Stats{Rows: 2, Jobs: 1, Duplicates: 1}},
		{"other delimiter, name with pipe", Options{Delimiter: ';'}, strings.ReplaceAll(head, "|", ";") +
			"6;a|b;u;2026-01-01T00:00:00;10;gres/gpu=2;COMPLETED\n",
			[]job.Job{{ID: "6", Name: "a|b", User: "u", Submit: utc(t, "2026-01-01T00:00:00Z"), GPUs: 2, RunTime: 10, State: "COMPLETED"}},
			Stats{Rows: 1, Jobs: 1}},
		{"Unix and RFC 3339 times, lower-case header, trailing delimiter (sacct -p)", Options{},
			"jobidraw|jobname|user|submit|start|end|alloctres|\n7|a|u|1793577600|2026-11-02T01:00:00+01:00|1793577660|gres/gpu=1|\n",
			[]job.Job{{ID: "7", Name: "a", User: "u", Submit: 1793577600, GPUs: 1, RunTime: 60}},
			Stats{Rows: 1, Jobs: 1}},
		{"work directory and submit line make the command; a '|' in the last field is the line's own", Options{},
			"JobID|JobName|User|Submit|ElapsedRaw|AllocTRES|WorkDir|SubmitLine\n" +
				"12|a|u|2026-01-01T00:00:00|10|cpu=2,mem=1.5G,gres/gpu=1|/home/u|sbatch --wrap \"cat x | wc\"\n" +
				"13|a|u|2026-01-01T00:00:00|10|gres/gpu=1||\n",
			[]job.Job{
				{ID: "12", Name: "a", User: "u", Submit: utc(t, "2026-01-01T00:00:00Z"), GPUs: 1, RunTime: 10,
					Command: job.CommandKey("/home/u", `sbatch --wrap "cat x | wc"`)},
				{ID: "13", Name: "a", User: "u", Submit: utc(t, "2026-01-01T00:00:00Z"), GPUs: 1, RunTime: 10},
			},
			Stats{Rows: 2, Jobs: 2}},
		{"heterogeneous job: one job under the leader's id, step of it skipped", Options{}, head +
			"8+0|a|u|2026-01-01T00:00:00|10|gres/gpu=1|COMPLETED\n8+0.0|a|u|2026-01-01T00:00:00|10|gres/gpu=1|COMPLETED\n",
			[]job.Job{{ID: "8", Name: "a", User: "u", Submit: utc(t, "2026-01-01T00:00:00Z"), GPUs: 1, RunTime: 10, State: "COMPLETED"}},
			Stats{Rows: 2, Jobs: 1, Steps: 1}},
		{"heterogeneous job: components merged, the leader's fields whichever comes first", Options{}, hetHead +
			"9|8+1|io|u|2026-01-01T00:00:01|11|gres/gpu=2|FAILED\n" +
			"8|8+0|train|u|2026-01-01T00:00:00|10|gres/gpu=1|COMPLETED\n" +
			"5|5|plain|u|2026-01-01T00:00:00|10|gres/gpu=1|COMPLETED\n",
			[]job.Job{
				{ID: "5", Name: "plain", User: "u", Submit: utc(t, "2026-01-01T00:00:00Z"), GPUs: 1, RunTime: 10, State: "COMPLETED"},
				{ID: "8", Name: "train", User: "u", Submit: utc(t, "2026-01-01T00:00:00Z"), GPUs: 3, RunTime: 11, State: "COMPLETED"},
			},
			Stats{Rows: 3, Jobs: 2, HetComponents: 1}},
		{"heterogeneous job: a component without GPUs counts with its job; a job without any is skipped once", Options{}, hetHead +
			"20|20+0|a|u|2026-01-01T00:00:00|10|cpu=4|COMPLETED\n" +
			"21|20+1|a|u|2026-01-01T00:00:00|10|gres/gpu=2|COMPLETED\n" +
			"30|30+0|b|u|2026-01-01T00:00:00|10|cpu=4|COMPLETED\n" +
			"31|30+1|b|u|2026-01-01T00:00:00|10|cpu=2|COMPLETED\n" +
			"40|40+0|c|u|2026-01-01T00:00:00|0|gres/gpu=1|CANCELLED\n",
			[]job.Job{{ID: "20", Name: "a", User: "u", Submit: utc(t, "2026-01-01T00:00:00Z"), GPUs: 2, RunTime: 10, State: "COMPLETED"}},
			Stats{Rows: 5, Jobs: 1, NoGPU: 1, NotRun: 1, HetComponents: 2}},
		{"heterogeneous job requeued (sacct -D): the last attempt's components win", Options{}, hetHead +
			"8|8+0|a|u|2026-01-01T00:00:00|5|gres/gpu=1|NODE_FAIL\n" +
			"9|8+1|a|u|2026-01-01T00:00:00|5|gres/gpu=1|NODE_FAIL\n" +
			"8|8+0|a|u|2026-01-01T00:00:00|20|gres/gpu=1|COMPLETED\n" +
			"9|8+1|a|u|2026-01-01T00:00:00|20|gres/gpu=1|COMPLETED\n",
			[]job.Job{{ID: "8", Name: "a", User: "u", Submit: utc(t, "2026-01-01T00:00:00Z"), GPUs: 2, RunTime: 20, State: "COMPLETED"}},
			Stats{Rows: 4, Jobs: 1, Duplicates: 1, HetComponents: 2}},
		{"the comment opts in to preemption, or names a bad word", Options{},
			"JobID|JobName|User|Submit|ElapsedRaw|AllocTRES|State|Comment\n" +
				"9|a|u|2026-01-01T00:00:00|10|gres/gpu=1|COMPLETED|ckpt asrpt:preempt=USR1@120\n" +
				"10|a|u|2026-01-01T00:00:00|10|gres/gpu=1|COMPLETED|asrpt:preempt=KILL@5\n" +
				"11|a|u|2026-01-01T00:00:00|10|gres/gpu=1|COMPLETED|\n",
			[]job.Job{
				{ID: "9", Name: "a", User: "u", Submit: utc(t, "2026-01-01T00:00:00Z"), GPUs: 1, RunTime: 10, State: "COMPLETED", Preemptible: true},
				{ID: "10", Name: "a", User: "u", Submit: utc(t, "2026-01-01T00:00:00Z"), GPUs: 1, RunTime: 10, State: "COMPLETED"},
				{ID: "11", Name: "a", User: "u", Submit: utc(t, "2026-01-01T00:00:00Z"), GPUs: 1, RunTime: 10, State: "COMPLETED"},
			},
			Stats{Rows: 3, Jobs: 3, Preemptible: 1, BadPreemptWords: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st, err := ReadStats(strings.NewReader(tc.input), "sacct.txt", Sacct, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("jobs:\n got  %+v\n want %+v", got, tc.want)
			}
			if st != tc.stats {
				t.Errorf("stats %+v, want %+v", st, tc.stats)
			}
		})
	}
}

func TestReadSacctBad(t *testing.T) {
	const head = "JobIDRaw|JobName|User|Submit|Start|End|Timelimit|NodeList|AllocTRES|State\n"
	const ok = "1|a|u|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:00|01:00:00|gpu1|gres/gpu=1|COMPLETED\n"
	tests := []struct {
		name  string
		input string
		line  int
		field string
		is    error
	}{
		{"no header (sacct --noheader)", "1|a|u|2026-01-01T00:00:00|10|gres/gpu=1|COMPLETED\n", 1, "", ErrHeader},
		{"no GPU field", "JobID|JobName|User|Submit|ElapsedRaw\n1|a|u|2026-01-01T00:00:00|10\n", 1, "", ErrHeader},
		{"no run time fields", "JobID|JobName|User|Submit|Start|AllocTRES\n", 1, "", ErrHeader},
		{"field twice", "JobID|JobName|User|Submit|ElapsedRaw|AllocTRES|jobname\n", 1, "JobName", ErrHeader},
		{"wrong field count", head + ok + "2|a|u|2026-01-01T00:00:00\n", 3, "", nil},
		{"bad submit", head + "1|a|u|01/01/2026|2026-01-01T00:00:00|2026-01-01T00:01:00|01:00:00|gpu1|gres/gpu=1|COMPLETED\n", 2, "Submit", nil},
		{"unknown submit", head + "1|a|u|Unknown|2026-01-01T00:00:00|2026-01-01T00:01:00|01:00:00|gpu1|gres/gpu=1|COMPLETED\n", 2, "Submit", nil},
		{"bad start", head + "1|a|u|2026-01-01T00:00:00|noon|2026-01-01T00:01:00|01:00:00|gpu1|gres/gpu=1|COMPLETED\n", 2, "Start", nil},
		{"end before start", head + "1|a|u|2026-01-01T00:00:00|2026-01-01T00:02:00|2026-01-01T00:01:00|01:00:00|gpu1|gres/gpu=1|COMPLETED\n", 2, "End", ErrValue},
		{"bad time limit", head + "1|a|u|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:00|soon|gpu1|gres/gpu=1|COMPLETED\n", 2, "Timelimit", nil},
		{"bad node list", head + "1|a|u|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:00|01:00:00|gpu[01-|gres/gpu=1|COMPLETED\n", 2, "NodeList", nil},
		{"bad GPU count", head + ok + "2|a|u|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:00|01:00:00|gpu1|gres/gpu=two|COMPLETED\n", 3, "AllocTRES", nil},
		{"negative GPU count", head + "2|a|u|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:00|01:00:00|gpu1|gres/gpu=-2|COMPLETED\n", 2, "AllocTRES", nil},
		{"empty job id", head + "|a|u|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:00|01:00:00|gpu1|gres/gpu=1|COMPLETED\n", 2, "JobIDRaw", nil},
		{"negative ElapsedRaw", "JobID|JobName|User|Submit|ElapsedRaw|AllocTRES\n1|a|u|2026-01-01T00:00:00|-5|gres/gpu=1\n", 2, "ElapsedRaw", ErrValue},
		{"bad ElapsedRaw", "JobID|JobName|User|Submit|ElapsedRaw|AllocTRES\n1|a|u|2026-01-01T00:00:00|1:00|gres/gpu=1\n", 2, "ElapsedRaw", nil},
		{"bad Elapsed", "JobID|JobName|User|Submit|Elapsed|AllocTRES\n1|a|u|2026-01-01T00:00:00|1:2:3:4|gres/gpu=1\n", 2, "Elapsed", nil},
		{"bad TimelimitRaw", "JobID|JobName|User|Submit|ElapsedRaw|TimelimitRaw|AllocTRES\n1|a|u|2026-01-01T00:00:00|5|1h|gres/gpu=1\n", 2, "TimelimitRaw", nil},
		{"array id not a number", "JobIDRaw|JobID|JobName|User|Submit|ElapsedRaw|AllocTRES\n7|x_3|a|u|2026-01-01T00:00:00|5|gres/gpu=1\n", 2, "JobID", ErrValue},
		{"heterogeneous offset not a number", "JobIDRaw|JobID|JobName|User|Submit|ElapsedRaw|AllocTRES\n9|8+x|a|u|2026-01-01T00:00:00|5|gres/gpu=1\n", 2, "JobID", ErrValue},
		{"heterogeneous leader not a number", "JobIDRaw|JobID|JobName|User|Submit|ElapsedRaw|AllocTRES\n9|+1|a|u|2026-01-01T00:00:00|5|gres/gpu=1\n", 2, "JobID", ErrValue},
		{"heterogeneous offset too large", "JobIDRaw|JobID|JobName|User|Submit|ElapsedRaw|AllocTRES\n9|8+5000|a|u|2026-01-01T00:00:00|5|gres/gpu=1\n", 2, "JobID", ErrValue},
		{"array id empty", "JobID|JobName|User|Submit|ElapsedRaw|AllocTRES\n_3|a|u|2026-01-01T00:00:00|5|gres/gpu=1\n", 2, "JobID", ErrValue},
		{"pipe in a submit line that is not the last field", "JobID|JobName|User|Submit|ElapsedRaw|AllocTRES|SubmitLine|State\n1|a|u|2026-01-01T00:00:00|5|gres/gpu=1|a | b|COMPLETED\n", 2, "", nil},
		{"bad NNodes", "JobID|JobName|User|Submit|ElapsedRaw|NNodes|AllocTRES\n1|a|u|2026-01-01T00:00:00|5|-1|gres/gpu=1\n", 2, "NNodes", ErrValue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := Read(strings.NewReader(tc.input), "acct.txt", Sacct)
			if err == nil {
				t.Fatalf("no error; got %+v", jobs)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q does not wrap %v", err, tc.is)
			}
			pe := parseErr(t, err)
			if pe.File != "acct.txt" || pe.Line != tc.line || pe.Field != tc.field {
				t.Errorf("error at %s:%d field %q, want acct.txt:%d field %q (%v)", pe.File, pe.Line, pe.Field, tc.line, tc.field, err)
			}
		})
	}
}

func TestReadSacctEmpty(t *testing.T) {
	const head = "JobID|JobName|User|Submit|ElapsedRaw|AllocTRES|State\n"
	for name, input := range map[string]string{
		"empty":          "",
		"blank lines":    "\n\n",
		"header only":    head,
		"only CPU jobs":  head + "1|a|u|2026-01-01T00:00:00|10|cpu=4,mem=1G|COMPLETED\n",
		"only job steps": head + "1.batch|a|u|2026-01-01T00:00:00|10|gres/gpu=1|COMPLETED\n",
	} {
		_, err := Read(strings.NewReader(input), "acct.txt", Sacct)
		if !errors.Is(err, ErrEmpty) {
			t.Errorf("%s: error %v, want ErrEmpty", name, err)
		}
	}
}

func TestTresGPUs(t *testing.T) {
	tests := []struct {
		in   string
		want int
		bad  bool
	}{
		{"billing=8,cpu=8,gres/gpu=4,mem=64G,node=1", 4, false},
		{"cpu=8,gres/gpu:a100=2,gres/gpu=2", 2, false},              // typed and untyped: no double count
		{"cpu=8,gres/gpu:a100=2,gres/gpu:v100=3", 5, false},         // typed only: sum
		{"cpu=8,gres/gpumem=40G,gres/gpuutil=100,mem=1G", 0, false}, // not GPU counts
		{"cpu=4", 0, false},
		{"", 0, false},
		{"gres/gpu=x", 0, true},
		{"gres/gpu:a100=1.5", 0, true},
	}
	for _, tc := range tests {
		got, err := tresGPUs(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("tresGPUs(%q) = %d, %v; want %d, bad %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestCountHosts(t *testing.T) {
	tests := []struct {
		in   string
		want int
		bad  bool
	}{
		{"gpu01", 1, false},
		{"gpu[01-04,07],login1", 6, false},
		{"rack[1-2]-n[1-4]", 8, false},
		{"None assigned", 0, false},
		{"a,b,c", 3, false},
		{"gpu[01-", 0, true},
		{"gpu]", 0, true},
		{"gpu[5-1]", 0, true},
		{"a,,b", 0, true},
		{"n[0-4294967294]", 0, true},
		{"n[1-1000]x[1-1000]y[1-1000]", 0, true},
	}
	for _, tc := range tests {
		got, err := countHosts(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("countHosts(%q) = %d, %v; want %d, bad %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
