// Package jobprofile decides the communication profile (design §1) of a
// live Slurm job, which Heavy-Edge places by. In order of precedence:
//
//  1. the profile the job names itself, as a word of its comment:
//     "asrpt:model=NAME" (sbatch --comment "asrpt:model=gpt2-1.5b"), NAME a
//     model of the placement catalogue, case-insensitive;
//  2. the first site rule matching the job's name family or account;
//  3. the K = 1 data-parallel profile with the configured gradient size.
//
// A named profile that cannot be used (a malformed word, an unknown model,
// a GPU count the model does not accept) is reported with the result and
// the job falls to the next source: a bad comment never stops a job from
// being scheduled.
package jobprofile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/asrpt/asrpt/jobword"
	"github.com/asrpt/asrpt/placement"
)

// TokenPrefix starts the comment word that names a job's profile.
const TokenPrefix = jobword.Prefix

// Source says where a job's profile came from.
type Source string

const (
	SourceComment Source = "comment"
	SourceRule    Source = "rule"
	SourceDefault Source = "default"
)

// ErrToken marks a comment word with the asrpt: prefix that is not valid
// (jobword.ErrWord).
var ErrToken = jobword.ErrWord

// ParseComment returns the model the comment names (jobword.Parse). ok is
// false when no model word, and no word of an unknown asrpt: key, is in
// the comment. A model word must be exactly "asrpt:model=NAME" with NAME
// of at most 64 letters, digits, '.', '-' and '_', and there must be at
// most one; a word with the prefix and an unknown key is an error too
// (a misspelt model word must not pass unnoticed). Errors wrap ErrToken
// and quote the word. A preempt word is not this function's business: a
// bad one is reported where preemption is decided. The model is returned
// lower-cased and not checked against the catalogue.
func ParseComment(comment string) (model string, ok bool, err error) {
	w := jobword.Parse(comment)
	switch {
	case w.ModelErr != nil:
		return "", true, w.ModelErr
	case w.Unknown != nil:
		return "", true, w.Unknown
	}
	return w.Model, w.HasModel, nil
}

// Rule gives the jobs it matches a catalogue profile. A job matches when
// every non-empty field matches; a rule has at least one.
type Rule struct {
	// Family is a job-name family (as the predictor and `asrpt plan` show
	// it); empty matches any.
	Family string
	// Account is a Slurm account; empty matches any.
	Account string
	// Model is the catalogue model the matching jobs train.
	Model string
}

// Matches reports whether a job of this family and account matches r.
func (r *Rule) Matches(family, account string) bool {
	return (r.Family != "" || r.Account != "") &&
		(r.Family == "" || r.Family == family) && (r.Account == "" || r.Account == account)
}

// Validate reports what makes r unusable: no field to match on, or a model
// the catalogue does not know.
func (r *Rule) Validate() error {
	if r.Family == "" && r.Account == "" {
		return errors.New("a rule needs a family or an account to match")
	}
	if !placement.Known(r.Model) {
		return fmt.Errorf("unknown model %q (known: %s)", r.Model, strings.Join(placement.Models(), ", "))
	}
	return nil
}

// Resolver decides profiles; the zero value uses no rules and
// placement.DefaultGradientBytes.
type Resolver struct {
	// Rules are tried in order; the first match wins.
	Rules []Rule
	// GradientBytes is the default profile's gradient size in bytes
	// (0: placement.DefaultGradientBytes).
	GradientBytes float64
}

// Resolved is the profile a job gets, and why.
type Resolved struct {
	// Profile is the profile for the job's GPUs (never nil for gpus ≥ 1).
	Profile *placement.Profile
	// Model is the catalogue model, or placement.DataParallelModel for the
	// default.
	Model  string
	Source Source
	// Problem says why a profile the job named, or a rule gave it, was not
	// used ("" when none was refused); ProblemKind is "comment" or "gpus"
	// for metrics.
	Problem, ProblemKind string
}

// Resolve returns the profile of a job with this comment, name family,
// account and GPU count (≥ 1).
func (r *Resolver) Resolve(comment, family, account string, gpus int) Resolved {
	var out Resolved
	refuse := func(kind string, err error) {
		if out.Problem == "" {
			out.Problem, out.ProblemKind = err.Error(), kind
		}
	}
	model, named, err := ParseComment(comment)
	switch {
	case err != nil:
		refuse("comment", err)
	case named:
		if p, err := placement.Lookup(model, gpus); err != nil {
			kind := "gpus"
			if !placement.Known(model) {
				kind = "comment"
			}
			refuse(kind, fmt.Errorf("job comment: %w", err))
		} else {
			return Resolved{Profile: p, Model: model, Source: SourceComment}
		}
	}
	for i := range r.Rules {
		rule := &r.Rules[i]
		if !rule.Matches(family, account) {
			continue
		}
		if p, err := placement.Lookup(rule.Model, gpus); err != nil {
			refuse("gpus", fmt.Errorf("profile rule %d: %w", i+1, err))
		} else {
			out.Profile, out.Model, out.Source = p, strings.ToLower(rule.Model), SourceRule
			return out
		}
		break
	}
	def := r.dataParallel(gpus)
	def.Problem, def.ProblemKind = out.Problem, out.ProblemKind
	return def
}

// dataParallel is the default profile for gpus GPUs.
func (r *Resolver) dataParallel(gpus int) Resolved {
	g := r.GradientBytes
	if g <= 0 {
		g = placement.DefaultGradientBytes
	}
	return Resolved{Profile: placement.DataParallel(gpus, g), Model: placement.DataParallelModel, Source: SourceDefault}
}

// Restore rebuilds the profile a job was given before (model and source as
// Resolve returned them, kept in a state file) for its gpus GPUs. A model
// that is no longer usable, or an empty one, gives the default profile.
func (r *Resolver) Restore(model string, source Source, gpus int) Resolved {
	if model != "" && model != placement.DataParallelModel && (source == SourceComment || source == SourceRule) {
		if p, err := placement.Lookup(model, gpus); err == nil {
			return Resolved{Profile: p, Model: strings.ToLower(model), Source: source}
		}
	}
	return r.dataParallel(gpus)
}
