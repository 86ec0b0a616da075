package jobprofile

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
	"github.com/asrpt/asrpt/placement"
)

func TestParseComment(t *testing.T) {
	for _, tc := range []struct {
		comment, model string
		ok             bool
		err            string
	}{
		{"", "", false, ""},
		{"sweep 3 of 8", "", false, ""},
		{"asrpt:model=gpt2-1.5b", "gpt2-1.5b", true, ""},
		{"  lr=3e-4   ASRPT:Model=BERT-Large  seed=1", "bert-large", true, ""},
		{"asrpt:model=", "", true, "the model name must be"},
		{"asrpt:model", "", true, "want asrpt:model=NAME"},
		{"asrpt:gpus=4", "", true, "want asrpt:model=NAME"},
		{"asrpt:model=a/b", "", true, "the model name must be"},
		{"asrpt:model=vgg16 asrpt:model=resnet50", "", true, "more than one"},
		{"asrpt:model=" + strings.Repeat("x", 100), "", true, "…"},
	} {
		model, ok, err := ParseComment(tc.comment)
		if tc.err != "" {
			if !errors.Is(err, ErrToken) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want ErrToken with %q", tc.comment, err, tc.err)
			}
			if !ok {
				t.Errorf("%q: ok false for a word with the prefix", tc.comment)
			}
			continue
		}
		if err != nil || model != tc.model || ok != tc.ok {
			t.Errorf("%q: %q %v %v, want %q %v", tc.comment, model, ok, err, tc.model, tc.ok)
		}
	}
}

func TestRule(t *testing.T) {
	for _, tc := range []struct {
		rule             Rule
		family, account  string
		match            bool
		validateContains string
	}{
		{Rule{Family: "train-gpt", Model: "gpt2-1.5b"}, "train-gpt", "nlp", true, ""},
		{Rule{Family: "train-gpt", Model: "gpt2-1.5b"}, "train-bert", "nlp", false, ""},
		{Rule{Account: "nlp", Model: "bert-large"}, "anything", "nlp", true, ""},
		{Rule{Family: "a", Account: "nlp", Model: "bert-large"}, "a", "vision", false, ""},
		{Rule{Model: "bert-large"}, "a", "nlp", false, "needs a family or an account"},
		{Rule{Family: "a", Model: "gpt5"}, "a", "", true, "unknown model"},
	} {
		if got := tc.rule.Matches(tc.family, tc.account); got != tc.match {
			t.Errorf("%+v on (%q, %q): %v, want %v", tc.rule, tc.family, tc.account, got, tc.match)
		}
		err := tc.rule.Validate()
		if (err != nil) != (tc.validateContains != "") || err != nil && !strings.Contains(err.Error(), tc.validateContains) {
			t.Errorf("%+v: Validate %v, want %q", tc.rule, err, tc.validateContains)
		}
	}
}

func TestResolve(t *testing.T) {
	r := Resolver{Rules: []Rule{
		{Family: "train-gpt", Model: "gpt2-1.5b"},
		{Account: "vision", Model: "vgg16"},
	}}
	for _, tc := range []struct {
		name, comment, family, account string
		gpus                           int
		model                          string
		source                         Source
		problemKind                    string
	}{
		{"comment wins over a rule", "asrpt:model=bert-large", "train-gpt", "vision", 8, "bert-large", SourceComment, ""},
		{"family rule", "", "train-gpt", "vision", 16, "gpt2-1.5b", SourceRule, ""},
		{"account rule", "", "other", "vision", 4, "vgg16", SourceRule, ""},
		{"default", "", "other", "nlp", 4, placement.DataParallelModel, SourceDefault, ""},
		{"bad word falls to the rule", "asrpt:modle=x", "other", "vision", 4, "vgg16", SourceRule, "comment"},
		{"unknown model falls to the default", "asrpt:model=gpt5", "other", "nlp", 4, placement.DataParallelModel, SourceDefault, "comment"},
		// gpt2-1.5b needs its GPUs in multiples of its pipeline depth.
		{"GPUs the named model refuses", "asrpt:model=gpt2-1.5b", "other", "nlp", 3, placement.DataParallelModel, SourceDefault, "gpus"},
		{"GPUs the rule's model refuses", "", "train-gpt", "nlp", 3, placement.DataParallelModel, SourceDefault, "gpus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := r.Resolve(tc.comment, tc.family, tc.account, tc.gpus)
			if got.Model != tc.model || got.Source != tc.source || got.ProblemKind != tc.problemKind {
				t.Fatalf("got %s from %s (problem %q: %s), want %s from %s (problem %q)",
					got.Model, got.Source, got.ProblemKind, got.Problem, tc.model, tc.source, tc.problemKind)
			}
			if (got.Problem != "") != (tc.problemKind != "") {
				t.Errorf("problem %q with kind %q", got.Problem, got.ProblemKind)
			}
			if got.Profile == nil || got.Profile.GPUs() != tc.gpus || got.Profile.Validate() != nil {
				t.Errorf("profile %+v for %d GPUs", got.Profile, tc.gpus)
			}
		})
	}
}

func TestResolveGradientBytes(t *testing.T) {
	def := (&Resolver{}).Resolve("", "", "", 8).Profile
	big := (&Resolver{GradientBytes: 4 * placement.DefaultGradientBytes}).Resolve("", "", "", 8).Profile
	if def.Stages[0].Gradient != placement.DefaultGradientBytes || big.Stages[0].Gradient != 4*placement.DefaultGradientBytes {
		t.Errorf("gradients %v and %v", def.Stages[0].Gradient, big.Stages[0].Gradient)
	}
	ref, err := placement.Lookup("resnet50", 8)
	if err != nil || !slices.Equal(def.Stages, ref.Stages) {
		t.Errorf("default profile %+v, want resnet50's stages %+v (%v)", def.Stages, ref, err)
	}
}

// FuzzParseComment: any comment gives a model, nothing, or ErrToken; a
// model is lower case and a word of the comment names it.
func FuzzParseComment(f *testing.F) {
	for _, s := range []string{"", "asrpt:model=gpt2-1.5b", "x ASRPT:MODEL=Vgg16 y", "asrpt:model=a asrpt:model=b", "asrpt:=", "asrpt:model=\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, comment string) {
		fuzzbound.Within(t, time.Second, func() {
			model, ok, err := ParseComment(comment)
			switch {
			case err != nil:
				if !errors.Is(err, ErrToken) || !ok || model != "" {
					t.Fatalf("%q: %q %v %v", comment, model, ok, err)
				}
			case ok:
				if model == "" || model != strings.ToLower(model) || !strings.Contains(strings.ToLower(comment), "asrpt:model="+model) {
					t.Fatalf("%q: model %q", comment, model)
				}
			case model != "":
				t.Fatalf("%q: model %q without a word", comment, model)
			}
			if ok {
				(&Resolver{}).Resolve(comment, "", "", 4)
			}
		})
	})
}

func TestRestore(t *testing.T) {
	r := Resolver{GradientBytes: 2 * placement.DefaultGradientBytes}
	for _, tc := range []struct {
		model  string
		source Source
		gpus   int
		want   string
		from   Source
	}{
		{"gpt2-1.5b", SourceComment, 8, "gpt2-1.5b", SourceComment},
		{"vgg16", SourceRule, 4, "vgg16", SourceRule},
		{placement.DataParallelModel, SourceDefault, 4, placement.DataParallelModel, SourceDefault},
		{"", "", 2, placement.DataParallelModel, SourceDefault},
		{"gpt2-1.5b", SourceComment, 3, placement.DataParallelModel, SourceDefault},
		{"no-such-model", SourceRule, 3, placement.DataParallelModel, SourceDefault},
	} {
		got := r.Restore(tc.model, tc.source, tc.gpus)
		if got.Model != tc.want || got.Source != tc.from || got.Profile.GPUs() != tc.gpus || got.Problem != "" {
			t.Errorf("Restore(%q, %q, %d) = %s from %s (%d GPUs, %q)", tc.model, tc.source, tc.gpus, got.Model, got.Source, got.Profile.GPUs(), got.Problem)
		}
		if got.Source == SourceDefault && got.Profile.Stages[0].Gradient != r.GradientBytes {
			t.Errorf("default gradient %v, want %v", got.Profile.Stages[0].Gradient, r.GradientBytes)
		}
	}
}
