package main

import (
	"bytes"
	"errors"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/reason"

	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/internal/golden"
	"github.com/asrpt/asrpt/internal/safetext/hostile"
	"github.com/asrpt/asrpt/sidecar"
)

var updateHostile = flag.Bool("update-hostile", false, "rewrite testdata/*-hostile.golden")

// hostilePlan is a plan whose job names, users, comments (the profile
// refused) and notes hold what Slurm users may write (issue 25: a job
// name with ESC, CR or LF forged plan lines and set the terminal title).
func hostilePlan() []decision.PlanRow {
	var rows []decision.PlanRow
	for i, n := range hostile.Names() {
		rows = append(rows, decision.PlanRow{JobID: "10" + string(rune('0'+i)), User: "u-" + n, Name: n, Shape: "plain", GPUs: 1,
			Predicted: 60, Known: true, Stage: "released", Rank: i + 1, Profile: "m" + n, ProfileSource: "comment",
			ProfileProblem: "bad asrpt: word " + n, Reason: reason.NoRoom, Note: "reason " + n, Nodes: []string{"gpu" + n}})
	}
	return rows
}

// TestHostileTextGolden: asrpt plan, asrpt status and the console log
// show control characters, bidi overrides and invalid UTF-8 from Slurm
// as escapes, and nothing a terminal acts on.
func TestHostileTextGolden(t *testing.T) {
	t.Run("plan", func(t *testing.T) {
		var buf bytes.Buffer
		if err := writePlan(&buf, hostilePlan()); err != nil {
			t.Fatal(err)
		}
		hostile.CheckClean(t, buf.String())
		golden.Check(t, filepath.Join("testdata", "plan-hostile.golden"), buf.Bytes(), *updateHostile)
	})
	t.Run("status", func(t *testing.T) {
		now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
		st := sampleStatus(now)
		st.LeftAlone, st.Incidents = nil, nil
		for i, n := range hostile.Names() {
			st.LeftAlone = append(st.LeftAlone, sidecar.LeftAloneJob{JobID: "7" + n, Code: reason.Held, Reason: "held: " + n})
			st.Incidents = append(st.Incidents, sidecar.IncidentStatus{Key: "write/" + n, Since: now, Occurrences: i + 1, LastError: "slurm said " + n})
		}
		st.Token.User = hostile.Names()[0]
		st.Stages["bad\x1b[2J"] = 1
		var buf bytes.Buffer
		if err := writeStatus(&buf, st, now); err != nil {
			t.Fatal(err)
		}
		hostile.CheckClean(t, buf.String())
		golden.Check(t, filepath.Join("testdata", "status-hostile.golden"), buf.Bytes(), *updateHostile)
	})
	t.Run("console log", func(t *testing.T) {
		var buf bytes.Buffer
		cw := consoleWriter(&buf)
		cw.NoColor = true
		cw.TimeFormat = "-"
		cw.FormatTimestamp = func(any) string { return "TIME" }
		log := zerolog.New(cw)
		for _, n := range hostile.Names() {
			log.Warn().Err(errors.New("slurm: "+n)).Str("name", n).Strs("nodes", []string{n}).Msg("job " + n)
		}
		hostile.CheckClean(t, buf.String())
		golden.Check(t, filepath.Join("testdata", "log-hostile.golden"), buf.Bytes(), *updateHostile)
	})
}
