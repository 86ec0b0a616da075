package predictor

import (
	"math"

	"github.com/asrpt/asrpt/job"
)

// SchemaVersion is the version of the feature schema. Change it whenever
// the meaning of a feature changes, not only its name: a model file with
// another version is refused.
const SchemaVersion = 1

// Categorical features, in schema order.
const (
	CatFamily = iota
	CatUser
	CatAccount
	CatPartition
	CatQOS
	NumCat
)

// catNames are the schema names of the categorical features.
var catNames = [NumCat]string{"family", "user", "account", "partition", "qos"}

// numNames are the schema names of the numeric features, in order. Log run
// times are natural logarithms of seconds; "since" is log(1+seconds) since
// the group's last run ended; counts are log(1+count).
var numNames = []string{
	"gpus", "nodes", "log_limit", "hour", "weekday",
	"grp_count", "grp_last", "grp_mean", "grp_median", "grp_p90", "grp_since", "grp_fail_share", "grp_ok_median",
	"user_count", "user_last", "user_mean", "user_median", "user_p90", "user_since", "user_fail_share", "user_ok_median",
	"part_median",
}

// NumNum is the number of numeric features.
var NumNum = len(numNames)

// Optional features, in schema order after the numeric ones. A job
// carries them only where its history does (sacct's WorkDir and
// SubmitLine; slurmrestd's accounting), so a model encodes one only when
// some training row had it (Encoder.Use): on a history without them the
// forest is the one it was before they existed, feature for feature and
// draw for draw. (The CPU count and the memory request, which job.Job
// carries too, are not features: README.md, "Features tried and not
// kept".)
const (
	// OptCommand is the history of the job's command (job.Command: the
	// same submit line from the same directory) within its (user, family)
	// group: three columns, the log(1+count), last and median log run
	// time of the group's finished runs of that command. The command
	// refines the group and never pools across groups: "sbatch train.sh"
	// from one directory may run many jobs that their names (#SBATCH -J)
	// tell apart. A new command has none (count 0).
	OptCommand = iota
	NumOpt
)

// optColumns are the schema names of the optional features' columns, in
// order, each with the optional feature it belongs to.
var optColumns = []struct {
	name string
	opt  int
}{{"cmd_count", OptCommand}, {"cmd_last", OptCommand}, {"cmd_median", OptCommand}}

// Optional holds a job's optional features: its command, 0 where
// unknown, and the statistics of the command's finished runs.
type Optional struct {
	Command uint64 // job.Command
	// Cmd is the statistics of the runs of Command that finished before
	// the job was submitted (Count 0: none, or no command).
	Cmd GroupStats
}

// numCommandCols is the number of columns of OptCommand.
const numCommandCols = 3

// columns writes o's command columns to buf and returns them, or nil when
// o has no command: log(1+count), last and median log run time (NaN when
// the command has no finished run).
func (o *Optional) columns(buf *[numCommandCols]float64) []float64 {
	if !o.has(OptCommand) {
		return nil
	}
	if s := &o.Cmd; s.Count > 0 {
		*buf = [numCommandCols]float64{math.Log1p(float64(s.Count)), s.Last, s.Median}
	} else {
		*buf = [numCommandCols]float64{0, math.NaN(), math.NaN()}
	}
	return buf[:]
}

// has reports whether optional feature k is known.
func (o *Optional) has(k int) bool { return k == OptCommand && o.Command != 0 }

// FeatureNames returns the names of the feature vector of schema 1, in
// order: the categorical features, then the numeric ones. An encoder
// appends the optional features it uses (Encoder.Names).
func FeatureNames() []string {
	out := append([]string{}, catNames[:]...)
	return append(out, numNames...)
}

// Row is one job's raw features: categorical values as strings and numeric
// values as floats, NaN where unknown (no history, no time limit).
type Row struct {
	Cat [NumCat]string
	Num []float64
	Opt Optional
	// Group, User and Partition are the history statistics the numeric
	// features came from; the baselines of Evaluate read them.
	Group, User, Partition, Limit, All GroupStats
}

// Extract computes j's features from j and h. It is pure: it reads no
// clock, and its result depends only on j and on what h holds. To keep it
// free of leakage the caller gives it a history of the jobs that finished
// strictly before j.Submit (BuildRows does this for a whole trace).
// Submit hour and weekday are taken in UTC.
func Extract(j *job.Job, h *History) Row { return extract(j, Family(j.Name), h) }

// extract is Extract with j's family already computed (fam ==
// Family(j.Name)).
func extract(j *job.Job, fam string, h *History) Row {
	return extractInto(j, fam, h, make([]float64, 0, NumNum))
}

// extractInto is extract with the numeric features appended to num[:0]
// (capacity NumNum: no allocation), for a row that is not kept.
func extractInto(j *job.Job, fam string, h *History, num []float64) Row {
	var r Row
	r.Cat = [NumCat]string{fam, j.User, j.Account, j.Partition, j.QOS}
	r.Opt = Optional{Command: j.Command, Cmd: h.commandStats(j.User, fam, j.Command)}
	r.Group, r.User, r.Partition, r.Limit, r.All = h.groupStats(j.User, fam), h.User(j), h.Partition(j), h.Limit(j), h.All()
	hour, weekday := hourWeekday(int64(j.Submit))
	nan := math.NaN()
	limit := nan
	if j.TimeLimit > 0 {
		limit = math.Log(j.TimeLimit)
	}
	nodes := nan
	if j.Nodes > 0 {
		nodes = float64(j.Nodes)
	}
	r.Num = append(num[:0], float64(j.GPUs), nodes, limit, float64(hour), float64(weekday))
	r.Num = appendStats(r.Num, r.Group, j.Submit)
	r.Num = appendStats(r.Num, r.User, j.Submit)
	r.Num = append(r.Num, r.Partition.Median)
	return r
}

// hourWeekday returns the UTC hour (0..23) and weekday (0 = Sunday) of
// Unix time sec, as time.Unix(sec, 0).UTC() gives them.
func hourWeekday(sec int64) (hour, weekday int) {
	const day = 86400
	days, rem := sec/day, sec%day
	if rem < 0 {
		days, rem = days-1, rem+day
	}
	// 1970-01-01 was a Thursday (4).
	weekday = int((days%7 + 7 + 4) % 7)
	return int(rem / 3600), weekday
}

func appendStats(dst []float64, s GroupStats, now float64) []float64 {
	since := math.NaN()
	if s.Count > 0 {
		since = math.Log1p(math.Max(0, now-s.LastEnd))
	}
	return append(dst, math.Log1p(float64(s.Count)), s.Last, s.Mean, s.Median, s.P90, since, s.FailShare, s.OKMedian)
}
