package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestUntilDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	start := time.Now()
	_, err := untilDone(ctx, "train", func() (int, error) { <-release; return 1, nil })
	if !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Fatalf("untilDone = %v after %v; want context.Canceled at once", err, time.Since(start))
	}
	if v, err := untilDone(context.Background(), "x", func() (int, error) { return 7, nil }); v != 7 || err != nil {
		t.Fatalf("untilDone = %d, %v", v, err)
	}
}

// TestInterruptedCommandsWriteNothing checks that train, eval and conf
// stop on a cancelled signal context without writing their outputs.
func TestInterruptedCommandsWriteNothing(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "h.csv")
	var gen bytes.Buffer
	if err := runGen(context.Background(), []string{"--jobs", "200", "--seed", "1"}, &gen, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hist, gen.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	model, js := filepath.Join(dir, "m.model"), filepath.Join(dir, "e.json")
	for name, run := range map[string]func() error{
		"train": func() error {
			return runTrain(ctx, []string{"--history", hist, "-o", model}, &bytes.Buffer{}, &bytes.Buffer{})
		},
		"eval": func() error {
			return runEval(ctx, []string{"--trace", hist, "--out", js}, &bytes.Buffer{}, &bytes.Buffer{})
		},
		"conf": func() error {
			return runConf(ctx, []string{"check", "--dir", dir}, &bytes.Buffer{}, &bytes.Buffer{})
		},
	} {
		if err := run(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s = %v; want context.Canceled", name, err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("files left: %v", ents)
	}
}
