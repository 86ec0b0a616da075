package fuzzbound

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fakeTB records a failure and ends its goroutine, as testing.T does.
type fakeTB struct {
	testing.TB
	failed bool
	msg    string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) FailNow() {
	f.failed = true
	runtime.Goexit()
}

func (f *fakeTB) Fatalf(format string, a ...any) {
	f.msg = fmt.Sprintf(format, a...)
	f.FailNow()
}

// run calls Within(fake, limit, fn) in a goroutine of its own and returns
// the fake and what Within panicked with.
func run(t *testing.T, limit time.Duration, fn func(tb *fakeTB)) (ft *fakeTB, panicked any) {
	ft = &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { panicked = recover() }()
		Within(ft, limit, func() { fn(ft) })
	}()
	<-done
	return ft, panicked
}

func TestWithinReturns(t *testing.T) {
	ran := false
	ft, p := run(t, time.Minute, func(*fakeTB) { ran = true })
	if !ran || ft.failed || p != nil {
		t.Fatalf("ran %v, failed %v, panic %v", ran, ft.failed, p)
	}
}

func TestWithinSlow(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	start := time.Now()
	ft, p := run(t, 10*time.Millisecond, func(*fakeTB) { <-block })
	want := fmt.Sprintf("not done within %v", 10*time.Millisecond*scale())
	if !ft.failed || !strings.Contains(ft.msg, want) || p != nil {
		t.Fatalf("failed %v, panic %v, message %.200q; want one containing %q", ft.failed, p, ft.msg, want)
	}
	if !strings.Contains(ft.msg, "TestWithinSlow") {
		t.Errorf("the message does not show the stuck goroutine: %.2000s", ft.msg)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("took %v", d)
	}
}

func TestWithinFatal(t *testing.T) {
	after := false
	ft, p := run(t, time.Minute, func(tb *fakeTB) {
		tb.Fatalf("bad input")
		after = true
	})
	if !ft.failed || after || ft.msg != "bad input" || p != nil {
		t.Fatalf("failed %v, after %v, message %q, panic %v", ft.failed, after, ft.msg, p)
	}
}

func TestWithinPanic(t *testing.T) {
	ft, p := run(t, time.Minute, func(*fakeTB) { panic("boom") })
	s, _ := p.(string)
	if ft.failed || !strings.HasPrefix(s, "boom\n") || !strings.Contains(s, "fuzzbound.Within") || !strings.Contains(s, "TestWithinPanic") {
		t.Fatalf("failed %v, panic %.500q", ft.failed, p)
	}
}

func TestScale(t *testing.T) {
	// go test without -fuzz: the seed slack, times the race slack.
	want := time.Duration(SeedSlack)
	if raceEnabled {
		want *= RaceSlack
	}
	if got := scale(); got != want {
		t.Errorf("scale() = %d, want %d", got, want)
	}
}
