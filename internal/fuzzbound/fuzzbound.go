// Package fuzzbound bounds the time a fuzz function may spend on one input.
// A fuzz function has no timeout of its own: an input that makes a parser
// loop for minutes stalls the fuzzer, and in a seed run the test still
// passes. Within fails the test instead, so that `go test -fuzz` saves the
// input under testdata/fuzz like any crasher.
//
// It is a helper for tests only; no production code imports it.
package fuzzbound

import (
	"flag"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// Within runs f in a goroutine and fails t with t.Fatalf, naming limit and
// showing where every goroutine is, when f has not returned within limit.
// The goroutine is left behind (a goroutine cannot be stopped); the fuzz
// process then reports the input as failing and go test saves it.
//
// f may call t.Error, t.Fatal and friends; a t.Fatal in f ends f and then
// the test, and a panic in f is raised again in the test's goroutine with
// f's stack, so the testing package reports it as usual.
//
// limit holds while fuzzing (-fuzz); a seed-corpus run of plain go test,
// which may share a loaded machine, gets SeedSlack times as long, and the
// race detector multiplies it by RaceSlack.
func Within(t testing.TB, limit time.Duration, f func()) {
	t.Helper()
	limit *= scale()
	type result struct {
		returned bool
		panicked any
		stack    []byte
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if !r.returned {
				if r.panicked = recover(); r.panicked != nil {
					r.stack = make([]byte, 64<<10)
					r.stack = r.stack[:runtime.Stack(r.stack, false)]
				}
			}
			done <- r
		}()
		f()
		r.returned = true
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r := <-done:
		switch {
		case r.panicked != nil:
			panic(fmt.Sprintf("%v\n\npanic in the function given to fuzzbound.Within:\n%s", r.panicked, r.stack))
		case !r.returned: // f called t.FailNow (t.Fatal) or runtime.Goexit
			t.FailNow()
		}
	case <-timer.C:
		buf := make([]byte, 256<<10)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("fuzzbound: the input was not done within %v; goroutines:\n%s", limit, buf)
	}
}

// SeedSlack and RaceSlack scale the limit outside fuzzing and under the
// race detector.
const (
	SeedSlack = 5
	RaceSlack = 5
)

// scale returns the factor applied to Within's limit.
func scale() time.Duration {
	s := time.Duration(1)
	if fl := flag.Lookup("test.fuzz"); fl == nil || fl.Value.String() == "" {
		s *= SeedSlack
	}
	if raceEnabled {
		s *= RaceSlack
	}
	return s
}
