package policy

import (
	"math"
	"testing"
	"time"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/placement"
)

// TestLASCoarseClock checks that 2D-LAS scheduling passes end and time
// moves on at clock values whose float64 spacing (16 s near 1e17) exceeds
// the time a job has left to its next threshold.
func TestLASCoarseClock(t *testing.T) {
	env := NewEnv(cluster.Uniform(1, 8), DefaultParams())
	p, _ := New("las", env)
	free := placement.NewFree(env.Cluster)
	tasks := newTasks(t, env, [][2]float64{{8, 1e6}, {8, 1e6}})
	done := make(chan string, 1)
	go func() {
		now := 1e17
		for _, task := range tasks {
			p.Arrive(now, task)
		}
		p.Schedule(now, free)
		for range 100 {
			next := p.NextEvent(now)
			if math.IsInf(next, 1) { // every job in the last queue
				break
			}
			if !(next > now) {
				done <- "next event does not move the clock"
				return
			}
			now = next
			p.Schedule(now, free)
		}
		done <- ""
	}()
	select {
	case msg := <-done:
		if msg != "" {
			t.Fatal(msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a scheduling pass did not end")
	}
}
