package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/asrpt/asrpt/internal/safetext"
)

// writeFairness prints the fairness part of the table, when the policies
// have a FairnessReport: one row of overall figures per policy, then for
// each policy its TableAccounts accounts and TableUsers users with the most
// GPU-hours, and its longest waits. Account, user and job names come
// from the trace and are escaped (safetext.Escape).
func (r *Report) writeFairness(w io.Writer) error {
	var targets string
	for _, s := range r.Policies {
		if s.FairnessReport != nil {
			targets = "target shares equal among the accounts"
			if s.FairnessReport.Targets == TargetsShares {
				targets = "target shares from " + r.SharesFile
			}
			break
		}
	}
	if targets == "" {
		return nil
	}
	fmt.Fprintf(w, "\nfairness: waits, and the share of the GPU-hours delivered while jobs waited (contended) by account; %s\n", targets)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tmax wait s\tp99 wait s\tp99 slowdown\tcontended s\tcontended GPU-h\taccounts\tusers\t")
	for _, s := range r.Policies {
		if f := s.FairnessReport; f != nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%s\t%s\t%d\t%d\t\n", s.Policy, num(f.MaxWait), num(f.P99Wait), f.P99Slowdown,
				num(f.ContendedSeconds), gpuHours(f.ContendedGPUHours), len(f.Accounts), len(f.Users))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Policies {
		f := s.FairnessReport
		if f == nil {
			continue
		}
		for _, g := range []struct {
			kind   string
			groups []Group
			top    int
		}{{"account", f.Accounts, r.TableAccounts}, {"user", f.Users, r.TableUsers}} {
			if g.top <= 0 || len(g.groups) == 0 {
				continue
			}
			top := topGroups(g.groups, g.top)
			fmt.Fprintf(w, "\nfairness of %s: the %d %ss with the most GPU-hours, of %d\n", s.Policy, len(top), g.kind, len(g.groups))
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintf(tw, "%s\tjobs\tGPU-h\tcontended\ttarget\tavg wait s\tmax wait s\tp99 wait s\tp99 slowdown\t\n", g.kind)
			for _, x := range top {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%.3f\t%.3f\t%s\t%s\t%s\t%.2f\t\n", safetext.Escape(x.Name), x.Jobs, gpuHours(x.GPUHours), x.ContendedShare,
					x.TargetShare, num(x.AvgWait), num(x.MaxWait), num(x.P99Wait), x.P99Slowdown)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		if len(f.Longest) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nfairness of %s: the %d longest waits\n", s.Policy, len(f.Longest))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "job\tuser\taccount\tGPUs\tsubmit s\twait s\trun time s\t")
		for _, j := range f.Longest {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t\n", safetext.Escape(j.ID), safetext.Escape(j.User), safetext.Escape(j.Account), j.GPUs,
				strconv.FormatFloat(j.Submit, 'f', 0, 64), num(j.Wait), num(j.RunTime))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// topGroups returns the n groups with the most GPU-hours, most first, ties
// by name.
func topGroups(groups []Group, n int) []Group {
	top := slices.Clone(groups)
	slices.SortStableFunc(top, func(a, b Group) int {
		if c := cmp.Compare(b.GPUHours, a.GPUHours); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return top[:min(n, len(top))]
}

// gpuHours formats GPU-hours: one decimal below 1000, then as num.
func gpuHours(v float64) string {
	if v < 1000 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return num(v)
}
