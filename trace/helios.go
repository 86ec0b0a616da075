package trace

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/asrpt/asrpt/job"
)

// HeliosEpoch is the Unix time (2020-01-01T00:00:00Z, a Wednesday) at which
// the Helios/Philly excerpts' first job is placed: their rows carry only
// the seconds since the previous submission. The sum of the intervals may
// reach MaxSubmit (180 years past the epoch).
const HeliosEpoch = 1577836800

// Helios excerpt columns this reader interprets; others (cpu_num,
// wall_time) are ignored.
const (
	hID = iota
	hUser
	hGPUs
	hNodes
	hInterval
	hRunTime
	hStatus
	numHelios
)

var heliosNames = [numHelios]string{"u_id", "user", "gpu_num", "node_num", "interval", "run_time", "new_status"}

// heliosStates maps the excerpts' statuses to Slurm state names.
var heliosStates = map[string]string{"pass": "COMPLETED", "failed": "FAILED", "killed": "CANCELLED"}

func readHelios(r io.Reader, name string) (*job.Table, Stats, error) {
	var st Stats
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return nil, st, nil
	}
	if err != nil {
		return nil, st, csvError(name, err)
	}
	pos := [numHelios]int{}
	for i := range pos {
		pos[i] = -1
	}
	for i, h := range head {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		for k, n := range heliosNames {
			if h == n {
				if pos[k] >= 0 {
					return nil, st, &ParseError{File: name, Line: 1, Field: n, Err: fmt.Errorf("%w: column %s twice", ErrHeader, n)}
				}
				pos[k] = i
			}
		}
	}
	for _, k := range []int{hUser, hGPUs, hInterval, hRunTime} {
		if pos[k] < 0 {
			return nil, st, &ParseError{File: name, Line: 1, Field: heliosNames[k],
				Err: fmt.Errorf("%w: required column %s missing (want u_id,user,gpu_num,cpu_num,node_num,interval,run_time,wall_time,new_status)", ErrHeader, heliosNames[k])}
		}
	}
	var (
		jobs jobBuf
		now  float64 = HeliosEpoch
	)
	ids := map[string]int{}
	in := interner{}
	for row := 0; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, st, csvError(name, err)
		}
		st.Rows++
		line, _ := cr.FieldPos(0)
		if len(rec) != len(head) {
			return nil, st, &ParseError{File: name, Line: line, Err: fmt.Errorf("%d fields, header has %d", len(rec), len(head))}
		}
		get := func(k int) string {
			if pos[k] < 0 {
				return ""
			}
			return strings.TrimSpace(rec[pos[k]])
		}
		fail := func(k int, err error) error {
			l, _ := cr.FieldPos(pos[k])
			return &ParseError{File: name, Line: l, Field: heliosNames[k], Err: err}
		}
		interval, err := parseSeconds(get(hInterval), false)
		if err != nil {
			return nil, st, fail(hInterval, err)
		}
		now += interval
		if err := checkTime("submit time HeliosEpoch + intervals", now); err != nil {
			return nil, st, fail(hInterval, err)
		}
		var j job.Job
		j.Submit = now
		j.ID = get(hID)
		if pos[hID] < 0 {
			j.ID = strconv.Itoa(row)
		} else if j.ID == "" {
			return nil, st, fail(hID, errors.New("empty job id"))
		}
		j.ID = strings.Clone(j.ID)
		u := get(hUser)
		if u == "" {
			return nil, st, fail(hUser, errors.New("empty user"))
		}
		j.User = in.get("u" + u)
		g, err := strconv.Atoi(get(hGPUs))
		if err != nil {
			return nil, st, fail(hGPUs, fmt.Errorf("GPU count %q is not an integer", get(hGPUs)))
		}
		if g < 0 || g > MaxGPUs {
			return nil, st, fail(hGPUs, fmt.Errorf("%w: %d GPUs, want 0..%d", ErrValue, g, MaxGPUs))
		}
		j.GPUs = g
		if j.Nodes, err = parseCount(get(hNodes), true); err != nil {
			return nil, st, fail(hNodes, err)
		}
		if j.RunTime, err = parseSeconds(get(hRunTime), false); err != nil {
			return nil, st, fail(hRunTime, err)
		}
		if err := checkDuration("run time", j.RunTime); err != nil {
			return nil, st, fail(hRunTime, err)
		}
		s := get(hStatus)
		if m, ok := heliosStates[strings.ToLower(s)]; ok {
			s = m
		}
		j.State = in.get(strings.ToUpper(s))
		switch {
		case g == 0:
			st.NoGPU++
			continue
		case j.RunTime == 0:
			st.NotRun++
			continue
		}
		if prev, dup := ids[j.ID]; dup {
			return nil, st, fail(hID, fmt.Errorf("%w: job id %q already on line %d", ErrValue, j.ID, prev))
		}
		ids[j.ID] = line
		if _, err := jobs.add(name, line, &j); err != nil {
			return nil, st, err
		}
	}
	return jobs.table(), st, nil
}
