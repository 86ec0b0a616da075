package sidecar

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/slurmclient"
)

// read is one Jobs call of the sidecar, the first call of every cycle.
type read struct {
	at  time.Time
	err error
}

// probe sits between the sidecar and the REST client: it records every
// cycle's read and checks every write against the last read.
type probe struct {
	inner Slurm

	mu    sync.Mutex
	reads []read
	state map[string]string          // job id → state in the last successful read
	last  map[string]slurmclient.Job // job id → record in the last successful read
	// redundant lists the writes of a value the job already had in the
	// last read (a write that changes nothing).
	redundant []string
	writes    map[string]int // successful writes per job
	failed    map[string]int // failed writes per job
	badWrites []string       // writes to jobs not last read as pending
	// heldPins lists the node lists sent to a job whose last read showed
	// Slurm holding it back (a dependency, a begin time, a limit).
	heldPins []string
	// pins counts the node lists sent per job.
	pins map[string]int
	// beforeWrite, when set, runs before a write is forwarded (fault
	// injection between read and write).
	beforeWrite func(id string)
	// signals lists the signals sent, "id SIGNAL delivery"; badSignals
	// those sent to a job the last read did not show running.
	signals, badSignals []string
}

func newProbe(inner Slurm) *probe {
	return &probe{inner: inner, state: map[string]string{}, last: map[string]slurmclient.Job{}, writes: map[string]int{}, failed: map[string]int{}}
}

func (p *probe) Jobs(ctx context.Context) ([]slurmclient.Job, error) {
	at := time.Now()
	js, err := p.inner.Jobs(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reads = append(p.reads, read{at: at, err: err})
	if err == nil {
		clear(p.state)
		clear(p.last)
		for _, j := range js {
			p.state[j.ID] = j.State
			p.last[j.ID] = j
		}
	}
	return js, err
}

func (p *probe) Nodes(ctx context.Context) ([]slurmclient.Node, error) { return p.inner.Nodes(ctx) }

func (p *probe) SupportsSiteFactor() bool { return p.inner.SupportsSiteFactor() }

func (p *probe) AccountingJobs(ctx context.Context, from, to time.Time) ([]job.Job, error) {
	return p.inner.AccountingJobs(ctx, from, to)
}

func (p *probe) UpdateJob(ctx context.Context, id string, u slurmclient.JobUpdate) error {
	p.mu.Lock()
	if st := p.state[id]; st != "PENDING" {
		p.badWrites = append(p.badWrites, fmt.Sprintf("job %s (last read %q): %+v", id, st, u))
	}
	if len(u.RequiredNodes) > 0 {
		if p.pins == nil {
			p.pins = map[string]int{}
		}
		p.pins[id]++
		if j, ok := p.last[id]; ok && decision.HeldBack(j.Reason) != "" {
			p.heldPins = append(p.heldPins, fmt.Sprintf("job %s (Reason=%s): %v", id, j.Reason, u.RequiredNodes))
		}
	}
	if j, ok := p.last[id]; ok && u.Hold == nil && (u.Priority == nil || *u.Priority == j.Priority) &&
		(u.RequiredNodes == nil || slices.Equal(u.RequiredNodes, j.RequiredNodes)) {
		p.redundant = append(p.redundant, fmt.Sprintf("job %s: %+v", id, u))
	}
	hook := p.beforeWrite
	p.mu.Unlock()
	if hook != nil {
		hook(id)
	}
	err := p.inner.UpdateJob(ctx, id, u)
	p.mu.Lock()
	if err == nil || errors.Is(err, slurmclient.ErrAppliedDespiteError) {
		p.writes[id]++
	} else {
		p.failed[id]++
	}
	p.mu.Unlock()
	return err
}

func (p *probe) SupportsDelivery(d slurmclient.Delivery) bool { return p.inner.SupportsDelivery(d) }

func (p *probe) SignalJob(ctx context.Context, id, signal string, d slurmclient.Delivery) error {
	p.mu.Lock()
	sent := fmt.Sprintf("%s %s %v", id, signal, d)
	p.signals = append(p.signals, sent)
	if st := p.state[id]; st != "RUNNING" {
		p.badSignals = append(p.badSignals, fmt.Sprintf("%s (last read %q)", sent, st))
	}
	p.mu.Unlock()
	return p.inner.SignalJob(ctx, id, signal, d)
}

// readsSince returns the cycles' reads started at or after t.
func (p *probe) readsSince(t time.Time) []read {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []read
	for _, r := range p.reads {
		if !r.at.Before(t) {
			out = append(out, r)
		}
	}
	return out
}

func (p *probe) writesTo(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.writes[id]
}
