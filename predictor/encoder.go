package predictor

import (
	"cmp"
	"math"
	"slices"
)

// MinCategoryCount is the number of training rows a categorical value needs
// to get a code of its own; rarer values are encoded like unseen ones.
const MinCategoryCount = 3

// Encoder turns a Row into the numeric feature vector the forest reads.
// A categorical value becomes its rank among the training values ordered by
// their mean log run time (so that "value ≤ threshold" splits group values
// with similar run times); a value that was unseen or rarer than
// MinCategoryCount in training becomes NaN, which the trees treat as
// missing. The vector holds the features of schema 1 (FeatureNames), then
// the columns of the optional features in Use, in optColumns order.
type Encoder struct {
	// Vocab[c] lists the known values of categorical feature c; a value's
	// code is its index.
	Vocab [NumCat][]string
	// Use[k] reports whether optional feature k is encoded: some training
	// row had it.
	Use   [NumOpt]bool
	index [NumCat]map[string]float64
}

// FitEncoder builds the vocabularies from training rows and their log run
// time targets y.
func FitEncoder(rows []Row, y []float64) *Encoder {
	return fitEncoder(len(rows), func(i int) (*[NumCat]string, bool) { return &rows[i].Cat, rows[i].Opt.has(OptCommand) }, y)
}

// fitEncoder is FitEncoder over n rows whose categorical values, and
// whether they have a command, row gives.
func fitEncoder(n int, row func(i int) (*[NumCat]string, bool), y []float64) *Encoder {
	e := &Encoder{}
	for c := 0; c < NumCat; c++ {
		e.Vocab[c] = vocabulary(n, func(i int) string { cat, _ := row(i); return cat[c] }, y)
	}
	for i := 0; i < n && !e.Use[OptCommand]; i++ {
		_, e.Use[OptCommand] = row(i)
	}
	e.buildIndex()
	return e
}

// vocabulary returns the values of one categorical feature held by at
// least MinCategoryCount of the n rows, ordered by their mean target y
// (ties by value).
func vocabulary(n int, value func(i int) string, y []float64) []string {
	type acc struct {
		sum float64
		n   int
	}
	m := map[string]*acc{}
	for i := 0; i < n; i++ {
		v := value(i)
		a := m[v]
		if a == nil {
			a = &acc{}
			m[v] = a
		}
		a.sum += y[i]
		a.n++
	}
	type kv struct {
		v    string
		mean float64
	}
	var vals []kv
	for v, a := range m {
		if a.n >= MinCategoryCount {
			vals = append(vals, kv{v, a.sum / float64(a.n)})
		}
	}
	slices.SortFunc(vals, func(a, b kv) int {
		if c := cmp.Compare(a.mean, b.mean); c != 0 {
			return c
		}
		return cmp.Compare(a.v, b.v)
	})
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = v.v
	}
	return out
}

func (e *Encoder) buildIndex() {
	for c := range e.Vocab {
		e.index[c] = make(map[string]float64, len(e.Vocab[c]))
		for i, v := range e.Vocab[c] {
			e.index[c][v] = float64(i)
		}
	}
}

// NumFeatures returns the length of the vectors Encode appends.
func (e *Encoder) NumFeatures() int {
	n := NumCat + NumNum
	for _, c := range optColumns {
		if e.Use[c.opt] {
			n++
		}
	}
	return n
}

// Names returns the names of the features Encode appends, in order.
func (e *Encoder) Names() []string {
	out := FeatureNames()
	for _, c := range optColumns {
		if e.Use[c.opt] {
			out = append(out, c.name)
		}
	}
	return out
}

// Encode appends r's feature vector (NumFeatures values) to dst.
func (e *Encoder) Encode(dst []float64, r *Row) []float64 {
	var cmd [numCommandCols]float64
	return e.encode(dst, &r.Cat, r.Num, r.Opt.columns(&cmd))
}

// encode appends the feature vector of a row with categorical values cat,
// numeric features num (schema 1) and command columns cmd (nil: no
// command).
func (e *Encoder) encode(dst []float64, cat *[NumCat]string, num, cmd []float64) []float64 {
	for c := 0; c < NumCat; c++ {
		v, ok := e.index[c][cat[c]]
		if !ok {
			v = math.NaN()
		}
		dst = append(dst, v)
	}
	dst = append(dst, num...)
	if e.Use[OptCommand] {
		if cmd == nil {
			nan := math.NaN()
			return append(dst, nan, nan, nan)
		}
		dst = append(dst, cmd...)
	}
	return dst
}
