// Package jobword reads the asrpt: words of a Slurm job's comment: what a
// user tells asrpt about a job with `sbatch --comment`. Two words are
// known, each at most once per comment:
//
//   - "asrpt:model=NAME": the job trains NAME, a model of the placement
//     catalogue (jobprofile decides what it is worth);
//   - "asrpt:preempt=[B:|F:]SIGNAL@SECONDS": the job checkpoints and requeues
//     itself when SIGNAL reaches it, and needs SECONDS after the signal to
//     do so; it opts in to preemption (docs/design.md, "Preempting the
//     jobs that can resume"). As in Slurm's own --signal=[B:]SIG@TIME, the
//     signal goes to the job's steps, or with "B:" to its batch shell
//     alone; "F:" sends it to both (all Slurm 22.05's REST API can do).
//
// The comment is written by the job's user: every word is bounded, the
// signal is one of a fixed list (never a number, which could name
// SIGKILL), and a problem quotes at most MaxWordLen bytes of the word. A
// bad word is an error for its key alone; the other key is still read.
package jobword

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Prefix starts every asrpt: word, in any case.
const Prefix = "asrpt:"

// MaxWordLen bounds a model name and the part of a word a problem quotes,
// bytes.
const MaxWordLen = 64

// MaxGrace is the longest grace a preempt word may ask for, seconds: the
// most Slurm's own --signal=SIG@TIME accepts.
const MaxGrace = 65535

// ErrWord marks a comment word with the asrpt: prefix that is not valid.
var ErrWord = errors.New("bad asrpt: word in the job comment")

// Signals are the signals a preempt word may name, as Slurm spells them
// without the SIG prefix: those the usual frameworks trap to checkpoint
// and requeue (PyTorch Lightning USR1, submitit USR2) and the polite
// termination signals. KILL, STOP and numbers are refused.
var Signals = []string{"USR1", "USR2", "TERM", "INT", "HUP"}

// Stop is how a job that opted in to preemption is stopped.
type Stop struct {
	// Signal is one of Signals.
	Signal string
	// Grace is the time the job needs from the signal to its requeue,
	// seconds, 1..MaxGrace.
	Grace int
	// To says which of the job's processes the signal goes to.
	To Target
}

// Target is which processes of a running job a stop signal goes to.
type Target uint8

const (
	// ToSteps: the job's steps alone (no prefix), as Slurm's
	// --signal=SIG@TIME; what PyTorch Lightning and submitit jobs trap.
	ToSteps Target = iota
	// ToBatch: the batch shell alone ("B:"), as --signal=B:SIG@TIME.
	ToBatch
	// ToFull: the batch shell and every step ("F:"): the only delivery
	// Slurm 22.05's REST API (v0.0.38) can make, for a job whose batch
	// shell traps the signal too.
	ToFull
)

// prefixes are the word's spellings of the targets.
var prefixes = [...]string{ToSteps: "", ToBatch: "B:", ToFull: "F:"}

// String returns the target's name: steps, batch or full.
func (t Target) String() string {
	switch t {
	case ToSteps:
		return "steps"
	case ToBatch:
		return "batch"
	case ToFull:
		return "full"
	}
	return "Target(" + strconv.Itoa(int(t)) + ")"
}

// String returns the stop as the word writes it: "USR1@120", "B:USR1@120",
// "F:USR1@120".
func (s Stop) String() string {
	p := ""
	if int(s.To) < len(prefixes) {
		p = prefixes[s.To]
	}
	return p + s.Signal + "@" + strconv.Itoa(s.Grace)
}

// ParseStop reads a stop as the preempt word's value writes it
// ("[B:|F:]SIGNAL@SECONDS"): the syntax a site rule of the sidecar's
// configuration uses too.
func ParseStop(val string) (Stop, error) {
	return parseStop("asrpt:preempt="+val, val, true)
}

// Words are the asrpt: words of one comment.
type Words struct {
	// Model is the model the comment names, lower-cased and not checked
	// against the catalogue; HasModel whether a model word was found
	// (valid or not); ModelErr what is wrong with it (wraps ErrWord).
	Model    string
	HasModel bool
	ModelErr error
	// Preempt is the stop the comment declares; HasPreempt whether a
	// preempt word was found; PreemptErr what is wrong with it.
	Preempt    Stop
	HasPreempt bool
	PreemptErr error
	// Unknown is the error for the first word with the prefix and a key
	// that is neither model nor preempt.
	Unknown error
}

// Preemptible reports whether the comment declares a valid stop.
func (w *Words) Preemptible() bool { return w.HasPreempt && w.PreemptErr == nil }

// Parse reads the asrpt: words of comment (words are separated by white
// space; the prefix and the keys are case-insensitive).
func Parse(comment string) Words {
	var w Words
	for _, word := range strings.Fields(comment) {
		if len(word) < len(Prefix) || !strings.EqualFold(word[:len(Prefix)], Prefix) {
			continue
		}
		key, val, found := strings.Cut(word[len(Prefix):], "=")
		switch strings.ToLower(key) {
		case "model":
			if w.HasModel {
				w.Model, w.ModelErr = "", fmt.Errorf("%w: more than one model word (%q)", ErrWord, clip(word))
				continue
			}
			w.HasModel = true
			w.Model, w.ModelErr = parseModel(word, val, found)
		case "preempt":
			if w.HasPreempt {
				w.Preempt, w.PreemptErr = Stop{}, fmt.Errorf("%w: more than one preempt word (%q)", ErrWord, clip(word))
				continue
			}
			w.HasPreempt = true
			w.Preempt, w.PreemptErr = parseStop(word, val, found)
		default:
			if w.Unknown == nil {
				w.Unknown = fmt.Errorf("%w: %q: want asrpt:model=NAME or asrpt:preempt=SIGNAL@SECONDS", ErrWord, clip(word))
			}
		}
	}
	return w
}

func parseModel(word, val string, found bool) (string, error) {
	switch {
	case !found:
		return "", fmt.Errorf("%w: %q: want asrpt:model=NAME", ErrWord, clip(word))
	case len(val) > MaxWordLen:
		return "", fmt.Errorf("%w: %q: the model name is longer than %d bytes", ErrWord, clip(word), MaxWordLen)
	case val == "" || strings.Trim(strings.ToLower(val), "abcdefghijklmnopqrstuvwxyz0123456789.-_") != "":
		return "", fmt.Errorf("%w: %q: the model name must be letters, digits, '.', '-' or '_'", ErrWord, clip(word))
	}
	return strings.ToLower(val), nil
}

func parseStop(word, val string, found bool) (Stop, error) {
	to := ToSteps
	if len(val) >= 2 {
		switch strings.ToUpper(val[:2]) {
		case "B:":
			to, val = ToBatch, val[2:]
		case "F:":
			to, val = ToFull, val[2:]
		}
	}
	sig, grace, hasGrace := strings.Cut(val, "@")
	if !found || !hasGrace {
		return Stop{}, fmt.Errorf("%w: %q: want asrpt:preempt=[B:|F:]SIGNAL@SECONDS, e.g. asrpt:preempt=USR1@120", ErrWord, clip(word))
	}
	name := strings.ToUpper(sig)
	name = strings.TrimPrefix(name, "SIG")
	known := false
	for _, s := range Signals {
		known = known || s == name
	}
	if !known {
		return Stop{}, fmt.Errorf("%w: %q: the signal must be one of %s", ErrWord, clip(word), strings.Join(Signals, ", "))
	}
	// Digits only: no sign, no spaces, no exponent.
	n, err := strconv.Atoi(grace)
	if err != nil || grace == "" || strings.Trim(grace, "0123456789") != "" || n < 1 || n > MaxGrace {
		return Stop{}, fmt.Errorf("%w: %q: the grace must be whole seconds in 1..%d", ErrWord, clip(word), MaxGrace)
	}
	return Stop{Signal: name, Grace: n, To: to}, nil
}

// clip bounds the part of a word an error quotes.
func clip(s string) string {
	if len(s) > MaxWordLen {
		return s[:MaxWordLen] + "…"
	}
	return s
}
