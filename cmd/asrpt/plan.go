package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/internal/ownedpath"
	"github.com/asrpt/asrpt/internal/safetext"
	"github.com/asrpt/asrpt/internal/statusauth"
	"github.com/asrpt/asrpt/sidecar"
	"github.com/asrpt/asrpt/slurmclient"
)

func init() {
	register("plan", "show the running sidecar's plan of its last cycle, or, without one (or with --fresh), a one-shot dry run against the live cluster", runPlan)
}

func runPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("plan", stderr)
	path := fs.String("config", defaultConfigPath, "configuration file (TOML)")
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	fresh := fs.Bool("fresh", false, "compute a plan now (a dry run) instead of showing the running sidecar's")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := sidecar.LoadConfig(*path)
	if err != nil {
		return err
	}
	if !*fresh && cfg.MetricsListen != "" {
		// The running daemon's own plan, when one answers.
		p, err := daemonPlan(ctx, cfg)
		if errors.Is(err, statusauth.ErrUnproven) || errors.Is(err, ownedpath.ErrUntrusted) {
			fmt.Fprintf(stderr, "asrpt plan: %v; computing a plan now\n", err)
		}
		if err == nil {
			if *asJSON {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(p.Rows)
			}
			mode := "writing"
			if p.DryRun {
				mode = "dry run"
			}
			fmt.Fprintf(stderr, "asrpt plan: the running sidecar's plan of its cycle at %s (%s); --fresh computes one now\n",
				p.Time.Local().Format(time.RFC3339), mode)
			return writePlan(stdout, p.Rows)
		}
	}
	cfg.DryRun = true // never writes, never moves the state file aside
	cfg.LogLevel = "warn"
	log := newLogger(cfg, stderr)
	cl, tiers, err := siteModel(cfg.Slurm.ConfDir)
	if err != nil {
		return fmt.Errorf("cluster model from %s: %w", cfg.Slurm.ConfDir, err)
	}
	client, err := slurmclient.New(ctx, clientConfig(cfg))
	if err != nil {
		return err
	}
	s, err := sidecar.New(cfg, sidecar.Options{Cluster: cl, PartitionTiers: tiers, Slurm: client, Log: log, SlurmVersion: slurmVersion(ctx, client)})
	if err != nil {
		return err
	}
	rep, err := s.Plan(ctx, time.Now())
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep.Plan)
	}
	return writePlan(stdout, rep.Plan)
}

// writePlan prints the plan as a table in squeue's spirit. Every text
// field is escaped (safetext.Escape): job names, users, comments and
// Slurm's reasons are written by others.
func writePlan(w io.Writer, rows []decision.PlanRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOBID\tUSER\tNAME\tSHAPE\tGPUS\tPROFILE\tPREDICTED\tESTIMATOR\tVIRTUAL_REMAINING\tRANK\tPRIORITY(now->new)\tSITE_FACTOR(now->new)\tNODES\tALPHA\tREASON\tNOTE")
	e := safetext.Escape
	for _, r := range rows {
		pred := shortDuration(r.Predicted)
		if !r.Known {
			pred += "?"
		}
		virt := r.Stage
		if r.Stage == "waiting" {
			virt = shortDuration(r.VirtualRemaining)
		}
		prio := fmt.Sprint(r.PriorityNow)
		if r.PriorityNew != r.PriorityNow {
			prio += "->" + fmt.Sprint(r.PriorityNew)
		}
		// The site factor asrpt wrote and the one it writes (factor mode).
		site := "-"
		if r.SiteFactorNow != nil && r.SiteFactorNew != nil {
			site = fmt.Sprint(*r.SiteFactorNow)
			if *r.SiteFactorNew != *r.SiteFactorNow {
				site += "->" + fmt.Sprint(*r.SiteFactorNew)
			}
		}
		nodes := strings.Join(r.Nodes, ",")
		if nodes == "" {
			nodes = "-"
		}
		rank := fmt.Sprint(r.Rank)
		if r.Stage == "left_alone" {
			pred, rank = "-", "-"
		}
		note := r.Note
		if r.Preemptible != nil {
			// A running job (asrpt-preempt): may asrpt stop it, and how.
			rank = "-"
			if r.Predicted == 0 {
				pred = "-"
			}
			p := "preemptible: no"
			if *r.Preemptible {
				p = "preemptible: yes"
			}
			if r.Stop != "" {
				p += " (" + r.Stop + " from " + r.StopFrom + ")"
			}
			switch {
			case r.Preemptions == 1:
				p += ", preempted once"
			case r.Preemptions > 1:
				p += fmt.Sprintf(", preempted %d times", r.Preemptions)
			}
			note = strings.TrimSuffix(p+"; "+note, "; ")
		}
		if r.ProfileProblem != "" {
			note = strings.TrimPrefix(note+"; ", "; ") + "profile refused: " + r.ProfileProblem
		}
		if r.PreemptProblem != "" {
			note = strings.TrimPrefix(note+"; ", "; ") + "not preemptible: " + r.PreemptProblem
		}
		if note == "" {
			note = "-"
		}
		// The profile and where it came from; a heavy job is marked '!'.
		prof := "-"
		if r.Profile != "" {
			prof = r.Profile + "(" + r.ProfileSource + ")"
			if r.Heavy {
				prof += "!"
			}
		}
		// α of the chosen nodes against the best placement's.
		alpha := "-"
		if r.Alpha > 0 && r.AlphaMin > 0 {
			alpha = fmt.Sprintf("%.3gs(x%.2f)", r.Alpha, r.Alpha/r.AlphaMin)
		}
		why := string(r.Reason)
		if why == "" {
			why = "-"
		}
		by := r.Estimator
		if by == "" || pred == "-" {
			by = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e(r.JobID), e(r.User), e(r.Name), e(r.Shape), r.GPUs,
			e(prof), pred, e(by), e(virt), rank, prio, site, e(nodes), alpha, why, e(note))
	}
	return tw.Flush()
}

// shortDuration formats seconds as 45s, 12m30s, 3h05m or 2d04h.
func shortDuration(s float64) string {
	if math.IsNaN(s) || s < 0 {
		return "-"
	}
	d := int64(math.Round(s))
	switch {
	case d < 60:
		return fmt.Sprintf("%ds", d)
	case d < 3600:
		return fmt.Sprintf("%dm%02ds", d/60, d%60)
	case d < 86400:
		return fmt.Sprintf("%dh%02dm", d/3600, d%3600/60)
	}
	return fmt.Sprintf("%dd%02dh", d/86400, d%86400/3600)
}

// daemonPlan asks the sidecar answering on cfg.MetricsListen for its last
// plan (daemonGet: only an answer proving the state directory's token).
func daemonPlan(ctx context.Context, cfg sidecar.Config) (*sidecar.ServedPlan, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	body, err := daemonGet(ctx, cfg, "http://"+cfg.MetricsListen+"/plan")
	if err != nil {
		return nil, err
	}
	var p sidecar.ServedPlan
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("/plan: %w", err)
	}
	return &p, nil
}
