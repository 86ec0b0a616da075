package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReplayFlagsRefused checks that every numeric flag of the replay, and
// --progress, refuses values out of range with a usage error (exit 2) that
// names the flag and the values allowed, before any work.
func TestReplayFlagsRefused(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--tau", "NaN"}, "--tau NaN: want a finite number in 0..1000"},
		{[]string{"--tau", "-1"}, "--tau -1: want"},
		{[]string{"--tau", "Inf"}, "--tau +Inf: want"},
		{[]string{"--slack", "-1"}, "--slack -1: want a finite number in 0..1000"},
		{[]string{"--slack", "NaN"}, "--slack NaN: want"},
		{[]string{"--comm-heavy", "0.1"}, "--comm-heavy 0.1: want a finite number in 1..1000"},
		{[]string{"--comm-heavy", "1e9"}, "--comm-heavy 1e+09: want"},
		{[]string{"--depth", "-7"}, "--depth -7: want an integer ≥ 0 (0: no bound)"},
		{[]string{"--reservations", "-1"}, "--reservations -1: want an integer ≥ 0 (0: none)"},
		{[]string{"--progress", "sometimes"}, `--progress "sometimes": want auto, always or never`},
		{[]string{"--nodes", "0"}, "--nodes 0: want 1..65536"},
		{[]string{"--nodes", "1000000000000"}, "--nodes 1000000000000: want 1..65536"},
		{[]string{"--gpus-per-node", "65"}, "--gpus-per-node 65: want 1..64"},
		{[]string{"--jobs", "0"}, "--jobs 0: want 1..16777216"},
		// The reproducer: a 17.6 GB allocation, refused before any.
		{[]string{"--jobs", "100000000"}, "--jobs 100000000: want 1..16777216"},
		{[]string{"--load", "NaN"}, "--load NaN: want a number in (0, 100]"},
		{[]string{"--load", "0"}, "--load 0: want"},
		{[]string{"--retrain-every", "Inf"}, `"Inf": want more than 0 and at most 100 years`},
		{[]string{"--retrain-every", "0"}, `"0": want more than 0`},
		{[]string{"--parallel", "0"}, "--parallel 0: want 1..1024"},
		{[]string{"--parallel", "99999999999"}, "--parallel 99999999999: want 1..1024"},
		{[]string{"--unseen", "sometimes"}, "sometimes"},
		{[]string{"--overdue-share", "1.5"}, "--overdue-share 1.5: want a finite number in 0..1"},
		{[]string{"--factor-overdue-share", "-0.5"}, "--factor-overdue-share -0.5: want a number in 0..1"},
		{[]string{"--factor-wait-scale", "NaN"}, "--factor-wait-scale NaN: want"},
		{[]string{"--rank", "mean"}, "mean"},
		{[]string{"--longest", "-1"}, "--longest -1: want 0..100000"},
		{[]string{"--top-accounts", "100001"}, "--top-accounts 100001: want 0..100000"},
		{[]string{"--top-users", "-5"}, "--top-users -5: want 0..100000"},
		{[]string{"--json", "r.json"}, `--json takes no file (it prints JSON on stdout): write "r.json" with --out`},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			start := time.Now()
			code := run(append([]string{"replay"}, tc.args...), &stdout, &stderr)
			if code != 2 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 mentioning %q", code, stderr.String(), tc.want)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("refused after %v", d)
			}
		})
	}
}

// TestQualityParamsRefused checks that the quality command shares the
// replay's validation of the policy tunables.
func TestQualityParamsRefused(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"quality", "--tau", "NaN"}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "--tau NaN: want") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming --tau", code, stderr.String())
	}
}

// TestReplayHugeValues replays traces with values that used to make the
// replay grow without bound: each now ends at once, with an error naming
// file, line, field and limit, or with a correct result.
func TestReplayHugeValues(t *testing.T) {
	const (
		sacE = "JobIDRaw|JobName|User|Submit|ElapsedRaw|AllocTRES|State\n"
		sacT = "JobIDRaw|JobName|User|Submit|Elapsed|AllocTRES|State\n"
		helH = "u_id,user,gpu_num,cpu_num,node_num,interval,run_time,wall_time,new_status\n"
	)
	cases := []struct {
		name, file, format, trace string
		code                      int
		want                      string
	}{
		{"native run time 1e300", "one.csv", "native", "id,submit,gpus,run_time\n1,0,1,1e300\n", 1,
			"one.csv:2: field run_time: value out of range: run time 1e+300 s, want at most 31536000 s (MaxRunTime, one year)"},
		{"native iterations 1e300", "it.csv", "native", "id,submit,gpus,run_time,profile,iterations\n1,0,8,5,bert-large,1e300\n", 1,
			"it.csv:2: field iterations: value out of range"},
		{"sacct ElapsedRaw 2^63-1", "acct.txt", "sacct", sacE + "1|a|u|2026-01-01T00:00:00|9223372036854775807|gres/gpu=1|COMPLETED\n", 1,
			"acct.txt:2: field ElapsedRaw: value out of range: run time"},
		{"sacct Elapsed 4294967295 days", "acct.txt", "sacct", sacT + "1|a|u|2026-01-01T00:00:00|4294967295-00:00:00|gres/gpu=1|COMPLETED\n", 1,
			"acct.txt:2: field Elapsed: value out of range"},
		{"sacct Submit 2^63-1", "acct.txt", "sacct", sacE + "1|a|u|2026-01-01T00:00:00|60|gres/gpu=1|COMPLETED\n2|a|u|9223372036854775807|60|gres/gpu=1|COMPLETED\n", 1,
			"acct.txt:3: field Submit: value out of range: submit time 9.223372036854776e+18 s, want 0..7258118400"},
		{"helios interval 1e300", "h.csv", "helios", helH + "0,1,1,1,1,0,84,0,Pass\n1,1,1,1,1,1e300,84,0,Pass\n", 1,
			"h.csv:3: field interval: value out of range"},
		{"helios run time 1e300", "h.csv", "helios", helH + "0,1,1,1,1,0,1e300,0,Pass\n", 1,
			"h.csv:2: field run_time: value out of range"},
		{"native run time one year", "year.csv", "native", "id,submit,gpus,run_time\n1,0,1,31536000\n2,10,8,10000000\n", 0, "lower bound"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), tc.file)
			if err := os.WriteFile(p, []byte(tc.trace), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "r.json")
			var stdout, stderr bytes.Buffer
			start := time.Now()
			code := run([]string{"replay", "--trace", p, "--format", tc.format, "--nodes", "1", "--gpus-per-node", "8",
				"--policies", "fifo,backfill,easypp,las,asrpt", "--predictor", "mean", "--out", out}, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stderr.String()+stdout.String(), tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d mentioning %q", code, stdout.String(), stderr.String(), tc.code, tc.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			if tc.code != 0 {
				return
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var rep struct{ Policies []map[string]any }
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatal(err)
			}
			for _, pol := range rep.Policies {
				if r, _ := pol["ratio_to_lb"].(float64); !(r >= 1) {
					t.Errorf("policy %v: ratio to the lower bound %v, want ≥ 1", pol["policy"], pol["ratio_to_lb"])
				}
			}
		})
	}
}

// TestReplayOutputsAllOrNothing: when one output cannot be written (the
// plot directory is a file), none of the others is left behind.
func TestReplayOutputsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	plots := filepath.Join(dir, "plots")
	if err := os.WriteFile(plots, []byte("a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	js, csv := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	var stdout, stderr bytes.Buffer
	code := run([]string{"replay", "--jobs", "50", "--nodes", "2", "--gpus-per-node", "8", "--policies", "fifo",
		"--progress", "never", "--out", js, "--csv", csv, "--plots", plots}, &stdout, &stderr)
	if code == 0 {
		t.Fatalf("replay with a file as plot directory succeeded:\n%s", stdout.String())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left after the failed replay: %v", entries)
	}
	if code := run([]string{"replay", "--jobs", "50", "--nodes", "2", "--gpus-per-node", "8", "--policies", "fifo",
		"--progress", "never", "--out", js, "--csv", csv, "--plots", filepath.Join(dir, "p")}, &stdout, &stderr); code != 0 {
		t.Fatalf("replay: %s", stderr.String())
	}
	for _, p := range []string{js, csv, filepath.Join(dir, "p", "jct-cdf.svg"), filepath.Join(dir, "p", "queue.svg")} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
}
