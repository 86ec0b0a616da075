package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeAsrpt writes a shell script that stands in for asrpt replay: it
// runs body with the replay's flags in "$@".
func fakeAsrpt(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "asrpt")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeOut is a shell function of the fake: it writes its first argument
// to the file after --out.
const writeOut = `out=; while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done; printf '%s' "$REPORT" > "$out"`

func TestRunReplay(t *testing.T) {
	run := replayRun{Policy: "asrpt", Predictor: "forest", Jobs: 10, Timeout: 10 * time.Second}
	tests := []struct {
		name    string
		body    string
		report  string
		timeout time.Duration
		want    replayResult // Wall and PeakRSSMiB not compared
		wantErr string
	}{
		{name: "figures from the report",
			body:   writeOut,
			report: `{"jobs": 10, "policies": [{"policy": "asrpt", "events": 40, "events_per_s": 1234.5, "train_s": 0.25}]}`,
			want:   replayResult{EventsPerS: 1234.5, Events: 40, TrainS: 0.25}},
		{name: "killed at its limit", body: "exec sleep 5", timeout: 200 * time.Millisecond,
			want: replayResult{Failed: "killed after 0.2 s"}},
		{name: "non-zero exit", body: "echo 'asrpt replay: bad trace' >&2; exit 3", wantErr: "bad trace"},
		{name: "no report", body: "true", wantErr: "no such file"},
		{name: "two policies", body: writeOut, report: `{"policies": [{"events": 1}, {"events": 1}]}`, wantErr: "2 policies"},
		{name: "no events", body: writeOut, report: `{"policies": [{"events": 0}]}`, wantErr: "no events"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("REPORT", tt.report)
			r := run
			if tt.timeout > 0 {
				r.Timeout = tt.timeout
			}
			got, err := runReplay(context.Background(), fakeAsrpt(t, tt.body), "trace.csv", t.TempDir(), r)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Wall <= 0 || got.PeakRSSMiB <= 0 {
				t.Errorf("wall %v, peak RSS %v MiB: want both measured", got.Wall, got.PeakRSSMiB)
			}
			got.Wall, got.PeakRSSMiB = 0, 0
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
