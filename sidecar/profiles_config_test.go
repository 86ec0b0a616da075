package sidecar

import (
	"strings"
	"testing"

	"github.com/asrpt/asrpt/jobprofile"
)

func TestProfilesConfig(t *testing.T) {
	const head = "[slurm]\nurl = \"unix:///s\"\n"
	for _, tc := range []struct {
		name, body string
		rules      []jobprofile.Rule
		gradient   float64
		problems   []string // each "line:key: text"
	}{
		{"rules in order, family normalised, model lower-cased",
			"[profiles]\ndefault_gradient_bytes = 4e8\n[[profiles.rule]]\nfamily = \"train-gpt-2024-11-01-run3\"\nmodel = \"GPT2-1.5B\"\n[[profiles.rule]]\naccount = \"vision\"\nmodel = \"vgg16\"\n",
			[]jobprofile.Rule{{Family: "train-gpt", Model: "gpt2-1.5b"}, {Account: "vision", Model: "vgg16"}}, 4e8, nil},
		{"each bad rule named with its header's line",
			"[[profiles.rule]]\nfamily = \"a\"\nmodel = \"gpt5\"\n[[profiles.rule]]\nmodel = \"vgg16\"\n[[profiles.rule]]\nfamily = \"b\"\nmodel = \"vgg16\"\ngpus = 4\n[[profiles.rule]]\nfamily = 7\nmodel = \"vgg16\"\n",
			nil, 0, []string{
				"3: profiles.rule[1]: unknown model \"gpt5\"",
				"6: profiles.rule[2]: a rule needs a family or an account",
				"8: profiles.rule[3]: gpus: unknown key",
				"12: profiles.rule[4]: family: want a string",
			}},
		{"a family of numbers only", "[[profiles.rule]]\nfamily = \"20241101\"\nmodel = \"vgg16\"\n", nil, 0,
			[]string{"3: profiles.rule[1]: family: a name of numbers"}},
		{"not an array of tables", "[profiles]\nrule = \"x\"\n", nil, 0, []string{"4: profiles.rule: want [[profiles.rule]] tables"}},
		{"gradient out of range", "[profiles]\ndefault_gradient_bytes = 0\n", nil, 0, []string{"4: profiles.default_gradient_bytes: 0: want"}},
		{"unknown key", "[profiles]\ngradient = 1\n", nil, 0, []string{"4: profiles.gradient: unknown key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(head+tc.body), "asrpt.toml")
			if len(tc.problems) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if len(c.Profiles.Rules) != len(tc.rules) {
					t.Fatalf("rules %+v, want %+v", c.Profiles.Rules, tc.rules)
				}
				for i := range tc.rules {
					if c.Profiles.Rules[i] != tc.rules[i] {
						t.Errorf("rule %d: %+v, want %+v", i+1, c.Profiles.Rules[i], tc.rules[i])
					}
				}
				if c.Profiles.GradientBytes != tc.gradient {
					t.Errorf("gradient %v, want %v", c.Profiles.GradientBytes, tc.gradient)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %v", tc.problems)
			}
			for _, p := range tc.problems {
				if !strings.Contains(err.Error(), "asrpt.toml:"+p) {
					t.Errorf("error\n%v\nlacks %q", err, p)
				}
			}
		})
	}
}
