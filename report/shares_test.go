package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sacctmgrAssoc is the shape of `sacctmgr show assoc -P` (Slurm 22.05,
// trimmed to a few columns).
const sacctmgrAssoc = `Cluster|Account|User|Partition|Share|Priority|GrpJobs|QOS|Def QOS
lab|root|||1|||normal|
lab|root|root||1|||normal|
lab|phys|||3|||normal|
lab|phys|ann||1|||normal|
lab|phys|bob||parent|||normal|
lab|chem|||1|||normal|
lab|chem|cat||1|||normal|
`

func TestReadShares(t *testing.T) {
	cases := []struct {
		name, in string
		want     map[string]float64
		err      string // part of the error, "" for none
	}{
		{"sacctmgr -P", sacctmgrAssoc,
			map[string]float64{"root": 0.2, "phys": 0.6, "chem": 0.2}, ""},
		{"sacctmgr -p, trailing bars, CRLF, blank lines", "\n" + strings.ReplaceAll(sacctmgrAssoc, "\n", "|\r\n\r\n"),
			map[string]float64{"root": 0.2, "phys": 0.6, "chem": 0.2}, ""},
		{"columns in another order, Fairshare", "Fairshare|User|Account\n2||a\n6||b\n", map[string]float64{"a": 0.25, "b": 0.75}, ""},
		{"parent: the parent's share", "Account|User|Share|Par Name\nroot||1|\nphys||3|root\nphys-a||parent|phys\nchem||parent|root\n",
			map[string]float64{"root": 1.0 / 8, "phys": 3.0 / 8, "phys-a": 3.0 / 8, "chem": 1.0 / 8}, ""},
		{"parent without ParentName: share 1", "Account|User|Share\na||3\nb||parent\n", map[string]float64{"a": 0.75, "b": 0.25}, ""},
		{"parent loop: share 1", "Account|User|Share|ParentName\na||parent|b\nb||parent|a\nc||2|\n",
			map[string]float64{"a": 0.25, "b": 0.25, "c": 0.5}, ""},
		{"same account twice, same share", "Cluster|Account|User|Share\nx|a||2\ny|a||2\nx|b||2\n", map[string]float64{"a": 0.5, "b": 0.5}, ""},
		{"a zero share", "Account|User|Share\na||0\nb||5\n", map[string]float64{"a": 0, "b": 1}, ""},
		{"user rows' shares are not read", "Account|User|Share\na||1\na|u|junk\n", map[string]float64{"a": 1}, ""},

		{"empty", "", nil, "f.txt: empty"},
		{"no Share column", "Account|User|Priority\na||1\n", nil, "f.txt:1: no column Share"},
		{"no User column", "Account|Share\na|1\n", nil, "f.txt:1: no column User"},
		{"column twice", "Account|User|Share|Fairshare\n", nil, `f.txt:1: column "Fairshare" twice`},
		{"fields", "Account|User|Share\na||1\nb|1\n", nil, "f.txt:3: 2 fields, the header has 3"},
		{"empty account", "Account|User|Share\n||1\n", nil, "f.txt:2: field Account: empty"},
		{"bad share", "Account|User|Share\na||1\nb||lots\n", nil, `f.txt:3: field Share: "lots": want a number`},
		{"negative share", "Account|User|Share\na||-1\n", nil, `f.txt:2: field Share: "-1"`},
		{"NaN share", "Account|User|Share\na||NaN\n", nil, `f.txt:2: field Share: "NaN"`},
		{"share too large", "Account|User|Share\na||1e10\n", nil, `f.txt:2: field Share: "1e10"`},
		{"empty share", "Account|User|Share\na||\n", nil, `f.txt:2: field Share: ""`},
		{"conflicting rows", "Account|User|Share\na||1\nb||1\na||2\n", nil, "f.txt:4: field Share: account a has share 2 here and 1 at line 2"},
		{"no account row", "Account|User|Share\na|u|1\n", nil, "f.txt: no account's row"},
		{"all zero", "Account|User|Share\na||0\n", nil, "f.txt: every account's share is 0"},
		{"long line", "Account|User|Share\n" + strings.Repeat("x", maxSharesLine+1) + "\n", nil, "f.txt:2: line longer than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadShares(strings.NewReader(c.in), "f.txt")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("shares %v, want %v", got, c.want)
			}
			for a, w := range c.want {
				if g, ok := got[a]; !ok || math.Abs(g-w) > 1e-12 {
					t.Errorf("share of %s = %v (%v), want %v", a, g, ok, w)
				}
			}
		})
	}
}

func TestReadSharesFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "assoc.txt")
	if err := os.WriteFile(p, []byte(sacctmgrAssoc), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := ReadSharesFile(p); err != nil || math.Abs(s["phys"]-0.6) > 1e-12 {
		t.Errorf("ReadSharesFile = %v, %v", s, err)
	}
	if _, err := ReadSharesFile(p + ".none"); err == nil || !strings.Contains(err.Error(), "assoc.txt.none") {
		t.Errorf("missing file: %v", err)
	}
}

// FuzzReadShares: any input is an error naming the input, or shares of
// listed accounts in [0, 1] summing to 1; never a panic.
func FuzzReadShares(f *testing.F) {
	f.Add(sacctmgrAssoc)
	f.Add("Account|User|Share|Par Name\nroot||1|\nphys||3|root\nphys-a||parent|phys\n")
	f.Add("Share|User|Account|\n2||a|\nparent||b|\n")
	f.Add("Account|User|Share\na||1\na||2\n")
	f.Fuzz(func(t *testing.T, in string) {
		shares, err := ReadShares(strings.NewReader(in), "in.txt")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "in.txt") {
				t.Fatalf("error does not name the input: %v", err)
			}
			return
		}
		var sum float64
		for a, s := range shares {
			if a == "" || !(s >= 0 && s <= 1) {
				t.Fatalf("share %q = %v", a, s)
			}
			sum += s
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("shares sum to %v: %v", sum, shares)
		}
	})
}
