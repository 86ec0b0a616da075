package jobword

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		comment     string
		model       string
		stop        string // Stop.String() of a valid preempt word
		modelErr    string
		preemptErr  string
		unknownErr  string
		preemptible bool
	}{
		{comment: ""},
		{comment: "sweep 3 of 8"},
		{comment: "asrpt:model=gpt2-1.5b", model: "gpt2-1.5b"},
		{comment: "asrpt:preempt=USR1@120", stop: "USR1@120", preemptible: true},
		{comment: "ASRPT:Preempt=sigusr2@90 lr=3e-4 asrpt:model=BERT-Large", model: "bert-large", stop: "USR2@90", preemptible: true},
		{comment: "asrpt:preempt=TERM@65535", stop: "TERM@65535", preemptible: true},
		{comment: "asrpt:preempt=b:usr1@90", stop: "B:USR1@90", preemptible: true},
		{comment: "asrpt:preempt=f:SIGusr2@30", stop: "F:USR2@30", preemptible: true},
		{comment: "asrpt:preempt=F:B:USR1@90", preemptErr: "the signal must be one of"},
		{comment: "asrpt:preempt=R:USR1@90", preemptErr: "the signal must be one of"},
		{comment: "asrpt:preempt=B:B:USR1@90", preemptErr: "the signal must be one of"},
		{comment: "asrpt:preempt=USR1", preemptErr: "want asrpt:preempt=[B:|F:]SIGNAL@SECONDS"},
		{comment: "asrpt:preempt", preemptErr: "want asrpt:preempt=[B:|F:]SIGNAL@SECONDS"},
		{comment: "asrpt:preempt=KILL@10", preemptErr: "the signal must be one of"},
		{comment: "asrpt:preempt=9@10", preemptErr: "the signal must be one of"},
		{comment: "asrpt:preempt=USR1@0", preemptErr: "whole seconds in 1..65535"},
		{comment: "asrpt:preempt=USR1@65536", preemptErr: "whole seconds in 1..65535"},
		{comment: "asrpt:preempt=USR1@+5", preemptErr: "whole seconds"},
		{comment: "asrpt:preempt=USR1@1e3", preemptErr: "whole seconds"},
		{comment: "asrpt:preempt=USR1@99999999999999999999", preemptErr: "whole seconds"},
		{comment: "asrpt:preempt=USR1@10 asrpt:preempt=USR2@10", preemptErr: "more than one preempt word"},
		{comment: "asrpt:model=x asrpt:preempt=KILL@1", model: "x", preemptErr: "the signal must be one of"},
		{comment: "asrpt:model= asrpt:preempt=USR1@60", modelErr: "the model name must be", stop: "USR1@60", preemptible: true},
		{comment: "asrpt:model=a asrpt:model=b", modelErr: "more than one model word"},
		{comment: "asrpt:model=" + strings.Repeat("x", 100), modelErr: "…"},
		{comment: "asrpt:gpus=4 asrpt:preempt=INT@30", unknownErr: "want asrpt:model=NAME or", stop: "INT@30", preemptible: true},
	} {
		w := Parse(tc.comment)
		check := func(what string, err error, want string) {
			t.Helper()
			if want == "" {
				if err != nil {
					t.Errorf("%q: %s error %v, want none", tc.comment, what, err)
				}
				return
			}
			if !errors.Is(err, ErrWord) || !strings.Contains(err.Error(), want) {
				t.Errorf("%q: %s error %v, want ErrWord with %q", tc.comment, what, err, want)
			}
		}
		check("model", w.ModelErr, tc.modelErr)
		check("preempt", w.PreemptErr, tc.preemptErr)
		check("unknown", w.Unknown, tc.unknownErr)
		if w.Model != tc.model {
			t.Errorf("%q: model %q, want %q", tc.comment, w.Model, tc.model)
		}
		if got := w.Preemptible(); got != tc.preemptible {
			t.Errorf("%q: preemptible %v, want %v", tc.comment, got, tc.preemptible)
		}
		if tc.stop != "" && w.Preempt.String() != tc.stop {
			t.Errorf("%q: stop %s, want %s", tc.comment, w.Preempt, tc.stop)
		}
	}
}

// FuzzParse: whatever a user writes, a valid stop names a listed signal
// and a grace in 1..MaxGrace and prints back to a word that parses to the
// same stop; a model is bounded; an error quotes a bounded part of a word.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "asrpt:preempt=USR1@120", "asrpt:model=vgg16 asrpt:preempt=sigterm@1",
		"asrpt:preempt=USR1@", "ASRPT:PREEMPT=usr2@065535", "asrpt:preempt=B:TERM@5", "asrpt:preempt=@@", "asrpt:x=1 asrpt:model=\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbound.Within(t, time.Second, func() {
			w := Parse(s)
			if w.Preemptible() {
				st := w.Preempt
				if st.Grace < 1 || st.Grace > MaxGrace {
					t.Fatalf("%q: grace %d", s, st.Grace)
				}
				again := Parse(Prefix + "preempt=" + st.String())
				if !again.Preemptible() || again.Preempt != st {
					t.Fatalf("%q: %v prints as a word that parses to %+v", s, st, again)
				}
				listed := false
				for _, sig := range Signals {
					listed = listed || sig == st.Signal
				}
				if !listed {
					t.Fatalf("%q: signal %q", s, st.Signal)
				}
			}
			if len(w.Model) > MaxWordLen {
				t.Fatalf("%q: model of %d bytes", s, len(w.Model))
			}
			for _, err := range []error{w.ModelErr, w.PreemptErr, w.Unknown} {
				if err != nil && (!errors.Is(err, ErrWord) || len(err.Error()) > 4*MaxWordLen+200) {
					t.Fatalf("%q: error %v", s, err)
				}
			}
		})
	})
}

// BenchmarkParse reads a typical comment with both words, as the sacct
// reader does for every row.
func BenchmarkParse(b *testing.B) {
	const comment = "sweep 3 lr=3e-4 asrpt:model=bert-large asrpt:preempt=USR1@120"
	b.ReportAllocs()
	for b.Loop() {
		if w := Parse(comment); !w.Preemptible() {
			b.Fatal("not preemptible")
		}
	}
}
