package trace

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/asrpt/asrpt/job"
)

// SacctWriteFields are the fields WriteSacct writes, in order: the part of
// RecommendedSacct a job history without a schedule can fill (no Start,
// End or NodeList, which only a real run has).
var SacctWriteFields = []string{
	"JobIDRaw", "JobID", "JobName", "User", "Account", "Partition", "QOS",
	"Submit", "ElapsedRaw", "TimelimitRaw", "NNodes", "AllocTRES", "State",
}

// WriteSacct writes jobs as `sacct -P -X -o` with SacctWriteFields prints
// them, header line included, so that Read with format Sacct reads them
// back. sacct keeps whole seconds and minutes, so the round trip is exact
// only for whole numbers; otherwise what reads back is:
//
//   - Submit: rounded down to the second, printed in UTC as
//     YYYY-MM-DDTHH:MM:SS (the reader's default zone);
//   - RunTime (ElapsedRaw): rounded to the nearest second, at least 1 s for
//     a job that ran (0 stays 0, a job the reader skips as never run);
//   - TimeLimit (TimelimitRaw): rounded up to whole minutes (a limit is
//     never shortened), 0 printed as UNLIMITED;
//   - JobID: the id, or ARRAY_TASK for an array task (ArrayJobID ARRAY, the
//     tasks of one array numbered from 0 in the order written), so that the
//     array id reads back; empty for a job outside arrays whose id holds
//     '_' (the reader then takes JobIDRaw alone, and no array);
//   - Nodes: NNodes, empty when 0;
//   - GPUs: AllocTRES "gres/gpu=N,node=M" (a job without GPUs has no
//     gres/gpu entry and is skipped by the reader);
//   - Command is a hash with no sacct field (sacct prints WorkDir and
//     SubmitLine, of which it is made) and is dropped;
//   - Profile and Iterations are not sacct fields and are dropped: a
//     profiled job reads back as a plain job of its RunTime;
//   - text fields lose surrounding spaces (the reader trims them).
//
// A job whose id is empty or contains '.' (read as a job step), a field
// holding '|' or a line break, a submit time outside 0..MaxSubmit, or a
// negative or non-finite run time or limit, or one above MaxRunTime, is an
// error naming the job: what is written reads back.
func WriteSacct(w io.Writer, jobs []job.Job) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if _, err := bw.WriteString(strings.Join(SacctWriteFields, "|") + "\n"); err != nil {
		return fmt.Errorf("trace: write sacct: %w", err)
	}
	rec := make([]string, len(SacctWriteFields))
	tasks := map[string]int{} // array id → tasks written
	for i := range jobs {
		task := -1
		if a := jobs[i].ArrayJobID; a != "" {
			task = tasks[a]
			tasks[a]++
		}
		if err := sacctRecord(rec, &jobs[i], task); err != nil {
			return fmt.Errorf("trace: write sacct: job %q: %w", jobs[i].ID, err)
		}
		if _, err := bw.WriteString(strings.Join(rec, "|") + "\n"); err != nil {
			return fmt.Errorf("trace: write sacct: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("trace: write sacct: %w", err)
	}
	return nil
}

// sacctRecord fills rec with the fields of j in SacctWriteFields order;
// task is j's index in its array (ignored when j.ArrayJobID is "").
func sacctRecord(rec []string, j *job.Job, task int) error {
	if j.ID == "" {
		return fmt.Errorf("%w: empty id", ErrValue)
	}
	if strings.Contains(j.ID, ".") {
		return fmt.Errorf("%w: id with '.' would read back as a job step", ErrValue)
	}
	if _, err := arrayParent(j.ArrayJobID + "_0"); j.ArrayJobID != "" && err != nil {
		return err
	}
	if err := checkTime("submit", j.Submit); err != nil {
		return err
	}
	if !finite(j.RunTime) || j.RunTime < 0 {
		return fmt.Errorf("%w: run time %v s, want a finite number ≥ 0", ErrValue, j.RunTime)
	}
	if err := checkDuration("run time", j.RunTime); err != nil {
		return err
	}
	if !finite(j.TimeLimit) || j.TimeLimit < 0 {
		return fmt.Errorf("%w: time limit %v s, want a finite number ≥ 0", ErrValue, j.TimeLimit)
	}
	if err := checkDuration("time limit", j.TimeLimit); err != nil {
		return err
	}
	if j.GPUs < 0 || j.Nodes < 0 {
		return fmt.Errorf("%w: %d GPUs on %d nodes", ErrValue, j.GPUs, j.Nodes)
	}
	elapsed := math.Round(j.RunTime)
	if j.RunTime > 0 {
		elapsed = max(1, elapsed)
	}
	limit := "UNLIMITED"
	if j.TimeLimit > 0 {
		limit = strconv.FormatFloat(math.Ceil(j.TimeLimit/60), 'f', 0, 64)
	}
	nodes := ""
	if j.Nodes > 0 {
		nodes = strconv.Itoa(j.Nodes)
	}
	var tres []string
	if j.GPUs > 0 {
		tres = append(tres, "gres/gpu="+strconv.Itoa(j.GPUs))
	}
	if j.Nodes > 0 {
		tres = append(tres, "node="+strconv.Itoa(j.Nodes))
	}
	rec[0] = j.ID
	rec[1] = j.ID
	if strings.Contains(j.ID, "_") { // would read back as an array task
		rec[1] = ""
	}
	if j.ArrayJobID != "" {
		rec[1] = j.ArrayJobID + "_" + strconv.Itoa(task)
	}
	rec[2] = j.Name
	rec[3] = j.User
	rec[4] = j.Account
	rec[5] = j.Partition
	rec[6] = j.QOS
	rec[7] = time.Unix(int64(math.Floor(j.Submit)), 0).UTC().Format(sacctLayout)
	rec[8] = strconv.FormatFloat(elapsed, 'f', 0, 64)
	rec[9] = limit
	rec[10] = nodes
	rec[11] = strings.Join(tres, ",")
	rec[12] = j.State
	for k, v := range rec {
		if strings.ContainsAny(v, "|\r\n") {
			return fmt.Errorf("%w: field %s %q holds '|' or a line break", ErrValue, SacctWriteFields[k], v)
		}
	}
	return nil
}
