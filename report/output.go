package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/asrpt/asrpt/internal/atomicfile"
	"github.com/asrpt/asrpt/internal/safetext"
	"github.com/asrpt/asrpt/sim"
)

// Report is everything one replay command produces.
type Report struct {
	// Workload says what was replayed: the trace file and its format, or
	// the built-in generator with its parameters.
	Workload string `json:"workload,omitempty"`
	Jobs     int    `json:"jobs"`
	Excluded int    `json:"excluded_jobs"`
	GPUs     int    `json:"gpus"`
	// LowerBound is LB's total JCT and its terms, seconds (sim.LowerBound);
	// LowerBoundBinding names the term that sets it: "virtual", "length"
	// or "mean_busy".
	LowerBound         float64 `json:"lower_bound_total_jct_s"`
	LowerBoundVirtual  float64 `json:"lower_bound_virtual_srpt_s"`
	LowerBoundLength   float64 `json:"lower_bound_sum_runtime_s"`
	LowerBoundMeanBusy float64 `json:"lower_bound_mean_busy_s"`
	LowerBoundBinding  string  `json:"lower_bound_binding"`
	// SharesFile is the file the accounts' target shares were read from
	// (ReadShares); empty for equal shares.
	SharesFile string `json:"shares_file,omitempty"`
	// Against is the baseline of the paired comparison (each policy's
	// Summary.Paired); empty when none.
	Against string `json:"against,omitempty"`
	// WhyJob is the job traced with asrpt replay --why (each policy's
	// Summary.Why tells its story); empty when none.
	WhyJob   string    `json:"why_job,omitempty"`
	Policies []Summary `json:"policies"`
	// TableAccounts and TableUsers are how many accounts and users, those
	// with the most GPU-hours, WriteTable lists for each policy with a
	// FairnessReport (none when 0); the JSON has them all.
	TableAccounts int `json:"-"`
	TableUsers    int `json:"-"`
}

// New starts a report for a trace of jobs on a cluster of gpus GPUs.
func New(jobs, excluded, gpus int, lb sim.LowerBound) *Report {
	return &Report{Jobs: jobs, Excluded: excluded, GPUs: gpus, LowerBound: lb.Total,
		LowerBoundVirtual: lb.Virtual, LowerBoundLength: lb.Length, LowerBoundMeanBusy: lb.MeanBusy,
		LowerBoundBinding: lb.Binding}
}

// WriteTable prints the human-readable table.
func (r *Report) WriteTable(w io.Writer) error {
	if r.Workload != "" {
		fmt.Fprintf(w, "workload: %s\n", safetext.EscapeN(r.Workload, 0))
	}
	fmt.Fprintf(w, "jobs %d (excluded %d larger than the cluster), GPUs %d, lower bound total JCT %s s (virtual SRPT %s, Σ run time %s, mean busy %s; binding %s)\n\n",
		r.Jobs, r.Excluded, r.GPUs, num(r.LowerBound), num(r.LowerBoundVirtual), num(r.LowerBoundLength),
		num(r.LowerBoundMeanBusy), r.LowerBoundBinding)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tpredictor\ttotal JCT s\tavg JCT s\tp50 JCT s\tp95 JCT s\tp99 JCT s\tavg wait s\tp99 wait s\tmakespan s\tutil\tslowdown\t×LB\tevents/s\t")
	for _, s := range r.Policies {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.3f\t%.2f\t%.3f\t%s\t\n",
			s.Policy, s.Predictor, num(s.TotalJCT), num(s.AvgJCT), num(s.P50JCT), num(s.P95JCT), num(s.P99JCT),
			num(s.AvgWait), num(s.P99Wait), num(s.Makespan), s.Utilization, s.AvgSlowdown, s.RatioToLB, num(s.EventsPerSecond))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := r.writePreemption(w); err != nil {
		return err
	}
	if err := r.writeLoop(w); err != nil {
		return err
	}
	if err := r.writeFairness(w); err != nil {
		return err
	}
	if err := r.writePaired(w); err != nil {
		return err
	}
	return r.writeWhy(w)
}

// num formats a figure compactly: integers up to 1e7, then scientific.
func num(v float64) string {
	if v >= 1e7 {
		return strconv.FormatFloat(v, 'e', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// csvColumns returns WriteCSV's columns: every field of Summary under its
// JSON name, in field order, then the report's lower bound. The CSV is
// derived from the same fields as the JSON, so neither can drop one; only
// the fields tagged csv:"-" (FairnessReport, not a figure) are left out.
func csvColumns() []string {
	t := reflect.TypeOf(Summary{})
	cols := make([]string, 0, t.NumField()+1)
	for i := range t.NumField() {
		if csvField(t.Field(i)) {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			cols = append(cols, name)
		}
	}
	return append(cols, "lower_bound_total_jct_s")
}

// csvField reports whether a field of Summary is a CSV column.
func csvField(f reflect.StructField) bool { return f.Tag.Get("csv") != "-" }

// WriteCSV writes one row per policy, with the columns of csvColumns.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvColumns()); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	for _, s := range r.Policies {
		v := reflect.ValueOf(s)
		row := make([]string, 0, v.NumField()+1)
		for i := range v.NumField() {
			if !csvField(v.Type().Field(i)) {
				continue
			}
			switch fv := v.Field(i); fv.Kind() {
			case reflect.Float64:
				row = append(row, f(fv.Float()))
			case reflect.Int:
				row = append(row, strconv.FormatInt(fv.Int(), 10))
			default:
				row = append(row, fmt.Sprint(fv.Interface()))
			}
		}
		if err := cw.Write(append(row, f(r.LowerBound))); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteFileAtomic writes a file all or nothing (atomicfile.Write), so that
// a failed run never leaves a half-written file.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	return atomicfile.Write(path, write)
}
