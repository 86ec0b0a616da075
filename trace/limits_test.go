package trace

import (
	"errors"
	"strings"
	"testing"
)

// TestReadLimits checks that every reader refuses values past the limits
// (run time, time limit, submit time, iterations) with a ParseError naming
// the file, line and field and quoting the limit, and accepts the limits
// themselves.
func TestReadLimits(t *testing.T) {
	const (
		nat  = "id,submit,gpus,run_time,time_limit,profile,iterations\n"
		sacE = "JobIDRaw|JobName|User|Submit|ElapsedRaw|TimelimitRaw|AllocTRES|State\n"
		sacS = "JobIDRaw|JobName|User|Submit|Start|End|Elapsed|Timelimit|AllocTRES|State\n"
		okS  = "1|a|u|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:00|00:01:00|01:00:00|gres/gpu=1|COMPLETED\n"
	)
	tests := []struct {
		name   string
		format Format
		file   string
		input  string
		line   int
		field  string
		limit  string // the error must quote this
	}{
		{"native run time 1e300", Native, "t.csv", nat + "1,0,1,1e300,,,\n", 2, "run_time", "31536000"},
		{"native run time one year and a second", Native, "t.csv", nat + "1,0,1,1,,,\n2,0,1,31536001,,,\n", 3, "run_time", "MaxRunTime"},
		{"native time limit 1e300", Native, "t.csv", nat + "1,0,1,5,1e300,,\n", 2, "time_limit", "31536000"},
		{"native iterations 1e300", Native, "t.csv", nat + "1,0,8,5,,bert-large,1e300\n", 2, "iterations", "MaxIterations"},
		{"native submit 2^63-1", Native, "t.csv", nat + "1,9223372036854775807,1,5,,,\n", 2, "submit", "7258118400"},
		{"native submit negative", Native, "t.csv", nat + "1,-1,1,5,,,\n", 2, "submit", "MaxSubmit"},
		{"native submit year 3000", Native, "t.csv", nat + "1,3000-01-01T00:00:00Z,1,5,,,\n", 2, "submit", "MaxSubmit"},
		{"jsonl run time 1e300", Native, "t.jsonl", `{"id":"1","submit":0,"gpus":1,"run_time":1e300}`, 1, "run_time", "MaxRunTime"},
		{"jsonl iterations 1e300", Native, "t.jsonl", `{"id":"1","submit":0,"gpus":8,"run_time":5,"profile":"bert-large","iterations":1e300}`, 1, "iterations", "MaxIterations"},
		{"sacct ElapsedRaw 2^63-1", Sacct, "acct.txt", sacE + "1|a|u|2026-01-01T00:00:00|9223372036854775807||gres/gpu=1|COMPLETED\n", 2, "ElapsedRaw", "MaxRunTime"},
		{"sacct Submit 2^63-1", Sacct, "acct.txt", sacE + "1|a|u|2026-01-01T00:00:00|5||gres/gpu=1|COMPLETED\n2|a|u|9223372036854775807|5||gres/gpu=1|COMPLETED\n", 3, "Submit", "MaxSubmit"},
		{"sacct Elapsed 4294967295 days", Sacct, "acct.txt", sacS + okS + "2|a|u|2026-01-01T00:00:00|||4294967295-00:00:00||gres/gpu=1|COMPLETED\n", 3, "Elapsed", "MaxRunTime"},
		{"sacct Elapsed fractional 1.5e300", Sacct, "acct.txt", sacS + "2|a|u|2026-01-01T00:00:00|||0:0:1.5e300||gres/gpu=1|COMPLETED\n", 2, "Elapsed", "MaxRunTime"},
		{"sacct End-Start two years", Sacct, "acct.txt", sacS + "2|a|u|2026-01-01T00:00:00|2026-01-01T00:00:00|2028-01-01T00:00:00|||gres/gpu=1|COMPLETED\n", 2, "End", "MaxRunTime"},
		{"sacct Start year 2300", Sacct, "acct.txt", sacS + "2|a|u|2026-01-01T00:00:00|2300-01-01T00:00:00|2300-01-01T00:01:00|||gres/gpu=1|COMPLETED\n", 2, "Start", "MaxSubmit"},
		{"helios run time 1e300", Helios, "h.csv", heliosHeader + "0,1,1,1,1,0,1e300,0,Pass\n", 2, "run_time", "MaxRunTime"},
		{"helios interval 1e300", Helios, "h.csv", heliosHeader + "0,1,1,1,1,0,84,0,Pass\n1,1,1,1,1,1e300,84,0,Pass\n", 3, "interval", "MaxSubmit"},
		{"helios intervals past 2200", Helios, "h.csv", heliosHeader + "0,1,1,1,1,4000000000,84,0,Pass\n1,1,1,1,1,4000000000,84,0,Pass\n", 3, "interval", "MaxSubmit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := Read(strings.NewReader(tc.input), tc.file, tc.format)
			if err == nil {
				t.Fatalf("no error; got %+v", jobs)
			}
			if !errors.Is(err, ErrValue) {
				t.Errorf("error %q does not wrap ErrValue", err)
			}
			pe := parseErr(t, err)
			if pe.File != tc.file || pe.Line != tc.line || pe.Field != tc.field {
				t.Errorf("error at %s:%d field %q, want %s:%d field %q (%v)", pe.File, pe.Line, pe.Field, tc.file, tc.line, tc.field, err)
			}
			if !strings.Contains(err.Error(), tc.limit) {
				t.Errorf("error %q does not quote the limit %q", err, tc.limit)
			}
		})
	}
}

// TestSacctLongLimitIsNone: a time limit in accounting above MaxRunTime
// (a partition's MaxTime of years, meaning none) reads as no limit.
func TestSacctLongLimitIsNone(t *testing.T) {
	in := "JobIDRaw|JobName|User|Submit|ElapsedRaw|TimelimitRaw|AllocTRES|State\n" +
		"1|a|u|2026-01-01T00:00:00|5|4294967293|gres/gpu=1|COMPLETED\n" +
		"2|a|u|2026-01-01T00:00:00|5|525601|gres/gpu=1|COMPLETED\n" +
		"3|a|u|2026-01-01T00:00:00|5|525600|gres/gpu=1|COMPLETED\n"
	jobs, err := Read(strings.NewReader(in), "acct.txt", Sacct)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 3 || jobs[0].TimeLimit != 0 || jobs[1].TimeLimit != 0 || jobs[2].TimeLimit != MaxRunTime {
		t.Errorf("time limits %v %v %v, want none, none, one year", jobs[0].TimeLimit, jobs[1].TimeLimit, jobs[2].TimeLimit)
	}
}

// TestReadAtLimits checks that the limits themselves are accepted.
func TestReadAtLimits(t *testing.T) {
	tests := []struct {
		name   string
		format Format
		file   string
		input  string
	}{
		{"native", Native, "t.csv", "id,submit,gpus,run_time,time_limit,profile,iterations\n1,0,8,31536000,31536000,,\n2,7258118400,8,5,,bert-large,1e9\n"},
		{"sacct", Sacct, "acct.txt", "JobIDRaw|JobName|User|Submit|ElapsedRaw|TimelimitRaw|AllocTRES|State\n1|a|u|0|31536000|525600|gres/gpu=1|COMPLETED\n2|a|u|7258118400|5||gres/gpu=1|COMPLETED\n"},
		{"helios", Helios, "h.csv", heliosHeader + "0,1,1,1,1,0,31536000,0,Pass\n1,1,1,1,1," + fmtSeconds(MaxSubmit-HeliosEpoch) + ",5,0,Pass\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := Read(strings.NewReader(tc.input), tc.file, tc.format)
			if err != nil {
				t.Fatal(err)
			}
			checkJobs(t, jobs)
			if len(jobs) != 2 {
				t.Errorf("%d jobs, want 2", len(jobs))
			}
		})
	}
}
