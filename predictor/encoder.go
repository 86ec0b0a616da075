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
// missing.
type Encoder struct {
	// Vocab[c] lists the known values of categorical feature c; a value's
	// code is its index.
	Vocab [NumCat][]string
	index [NumCat]map[string]float64
}

// FitEncoder builds the vocabularies from training rows and their log run
// time targets y.
func FitEncoder(rows []Row, y []float64) *Encoder {
	return fitEncoder(len(rows), func(i int) *[NumCat]string { return &rows[i].Cat }, y)
}

// fitEncoder is FitEncoder over n rows whose categorical values cat gives.
func fitEncoder(n int, cat func(i int) *[NumCat]string, y []float64) *Encoder {
	e := &Encoder{}
	for c := 0; c < NumCat; c++ {
		type acc struct {
			sum float64
			n   int
		}
		m := map[string]*acc{}
		for i := 0; i < n; i++ {
			v := cat(i)[c]
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
		e.Vocab[c] = make([]string, len(vals))
		for i, v := range vals {
			e.Vocab[c][i] = v.v
		}
	}
	e.buildIndex()
	return e
}

func (e *Encoder) buildIndex() {
	for c := range e.Vocab {
		e.index[c] = make(map[string]float64, len(e.Vocab[c]))
		for i, v := range e.Vocab[c] {
			e.index[c][v] = float64(i)
		}
	}
}

// Encode appends r's feature vector (len(FeatureNames()) values) to dst.
func (e *Encoder) Encode(dst []float64, r *Row) []float64 { return e.encode(dst, &r.Cat, r.Num) }

func (e *Encoder) encode(dst []float64, cat *[NumCat]string, num []float64) []float64 {
	for c := 0; c < NumCat; c++ {
		v, ok := e.index[c][cat[c]]
		if !ok {
			v = math.NaN()
		}
		dst = append(dst, v)
	}
	return append(dst, num...)
}
