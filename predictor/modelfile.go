package predictor

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"strings"

	"github.com/asrpt/asrpt/internal/atomicfile"
)

// Model file layout (all integers little-endian):
//
//	magic      8 bytes  "ASRPTRF\n"
//	version    uint32   FileVersion
//	hdrLen     uint32   length of the JSON header
//	header     JSON     fileHeader: schema, vocabularies, settings, tree count
//	trees      per tree: uint32 node count, then per node
//	                     float64 threshold-or-value, int32 right, int32 feature
//	                     (a leaf's right is its index among the tree's leaves
//	                     in preorder), then per leaf in preorder
//	                     float64 expected-value output (Ensemble.Means)
//	crc        uint32   CRC-32 (IEEE) of everything before it
const (
	fileMagic = "ASRPTRF\n"
	// FileVersion is the version of the model file layout. Version 2
	// added the leaves' expected-value outputs; version 1 files (one
	// output, the median) are refused.
	FileVersion = 2
	// maxHeader, maxTreeNodes bound what the decoder accepts.
	maxHeader    = 64 << 20
	maxTreeNodes = 1 << 26
	maxFileDepth = 64
)

// ErrModelFile is wrapped by every error about a model file that cannot
// be used: corrupt, of another layout version, or of another feature
// schema (ErrSchema).
var ErrModelFile = errors.New("bad model file")

// ErrSchema is wrapped (together with ErrModelFile) when a model file was
// written for another feature schema; the message says what differs.
var ErrSchema = errors.New("feature schema differs")

type fileHeader struct {
	SchemaVersion int          `json:"schema_version"`
	Features      []string     `json:"features"`
	Vocab         [][]string   `json:"vocab"`
	Quantile      float64      `json:"quantile"`
	Trees         int          `json:"trees"`
	TrainRows     int          `json:"train_rows"`
	Config        fileSettings `json:"config"`
}

// fileSettings records the training settings (informational).
type fileSettings struct {
	MaxDepth       int     `json:"max_depth"`
	MinSamplesLeaf int     `json:"min_samples_leaf"`
	MaxFeatures    int     `json:"max_features"`
	MaxSamples     int     `json:"max_samples,omitempty"`
	Bins           int     `json:"bins"`
	Leaf           string  `json:"leaf"`
	Seed           uint64  `json:"seed"`
	FailWeight     float64 `json:"fail_weight"`
	Residual       bool    `json:"residual"`
}

// WriteTo writes m in the model file format.
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	var buf bytes.Buffer
	buf.WriteString(fileMagic)
	vocab := make([][]string, NumCat)
	for c := range vocab {
		vocab[c] = m.Encoder.Vocab[c]
		if vocab[c] == nil {
			vocab[c] = []string{}
		}
	}
	p := m.Config.Forest
	hdr, err := json.Marshal(fileHeader{
		SchemaVersion: SchemaVersion, Features: m.Encoder.Names(), Vocab: vocab,
		Quantile: m.Forest.Quantile, Trees: len(m.Forest.Trees), TrainRows: m.TrainRows,
		Config: fileSettings{MaxDepth: p.MaxDepth, MinSamplesLeaf: p.MinSamplesLeaf, MaxFeatures: p.MaxFeatures,
			MaxSamples: p.MaxSamples, Bins: p.Bins, Leaf: p.Leaf.String(), Seed: p.Seed, FailWeight: m.Config.FailWeight, Residual: m.Config.Residual},
	})
	if err != nil {
		return 0, fmt.Errorf("model file: %w", err)
	}
	le := binary.LittleEndian
	buf.Write(le.AppendUint32(nil, FileVersion))
	buf.Write(le.AppendUint32(nil, uint32(len(hdr))))
	buf.Write(hdr)
	var b [16]byte
	for ti, t := range m.Forest.Trees {
		buf.Write(le.AppendUint32(nil, uint32(len(t))))
		for _, n := range t {
			le.PutUint64(b[0:], math.Float64bits(n.Thr))
			le.PutUint32(b[8:], uint32(n.Right))
			le.PutUint32(b[12:], uint32(n.Feat))
			buf.Write(b[:])
		}
		for _, v := range m.Forest.Means[ti] {
			buf.Write(le.AppendUint64(nil, math.Float64bits(v)))
		}
	}
	buf.Write(le.AppendUint32(nil, crc32.ChecksumIEEE(buf.Bytes())))
	return buf.WriteTo(w)
}

// SaveFile writes m to path, all or nothing (a failed write leaves no
// half-written model behind).
func (m *Model) SaveFile(path string) error {
	err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := m.WriteTo(w)
		return err
	})
	if err != nil {
		return fmt.Errorf("model file: %w", err)
	}
	return nil
}

// LoadFile reads a model file; errors name the file.
func LoadFile(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("model file: %w", err)
	}
	m, err := DecodeModel(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// DecodeModel parses a model file. It refuses a file of another layout
// version or feature schema (the error wraps ErrModelFile, and ErrSchema
// for a schema mismatch, and says what differs) and any corrupt file; it
// never panics.
func DecodeModel(data []byte) (*Model, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrModelFile, fmt.Sprintf(format, a...))
	}
	le := binary.LittleEndian
	if len(data) < len(fileMagic)+12 || string(data[:len(fileMagic)]) != fileMagic {
		return nil, bad("not an asrpt model file (no %q header)", strings.TrimSpace(fileMagic))
	}
	if v := le.Uint32(data[8:]); v != FileVersion {
		return nil, bad("file layout version %d, this build reads version %d", v, FileVersion)
	}
	body, sum := data[:len(data)-4], le.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, bad("checksum mismatch (file truncated or corrupt)")
	}
	hl := uint64(le.Uint32(data[12:]))
	rest := body[16:]
	if hl > maxHeader || hl > uint64(len(rest)) {
		return nil, bad("header length %d exceeds the file", hl)
	}
	var h fileHeader
	dec := json.NewDecoder(bytes.NewReader(rest[:hl]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, bad("header: %v", err)
	}
	rest = rest[hl:]
	use, err := checkSchema(&h)
	if err != nil {
		return nil, err
	}
	if h.Trees < 1 || h.Trees > 10000 {
		return nil, bad("tree count %d out of range 1..10000", h.Trees)
	}
	if !(h.Quantile >= 0 && h.Quantile < 1) {
		return nil, bad("quantile %g out of range [0, 1)", h.Quantile)
	}
	nf := len(h.Features)
	e := &Ensemble{NumFeatures: nf, Quantile: h.Quantile, Trees: make([]tree, h.Trees), Means: make([][]float64, h.Trees)}
	for t := range e.Trees {
		if len(rest) < 4 {
			return nil, bad("tree %d: file ends early", t)
		}
		n := uint64(le.Uint32(rest))
		rest = rest[4:]
		if n < 1 || n > maxTreeNodes || n*16 > uint64(len(rest)) {
			return nil, bad("tree %d: node count %d does not fit the file", t, n)
		}
		tr := make(tree, n)
		for i := range tr {
			tr[i] = node{Thr: math.Float64frombits(le.Uint64(rest)), Right: int32(le.Uint32(rest[8:])), Feat: int32(le.Uint32(rest[12:]))}
			rest = rest[16:]
		}
		leaves := 0
		if end, err := checkTree(tr, 0, 0, nf, &leaves); err != nil {
			return nil, bad("tree %d: %v", t, err)
		} else if end != len(tr) {
			return nil, bad("tree %d: %d nodes unreachable", t, len(tr)-end)
		}
		if uint64(leaves)*8 > uint64(len(rest)) {
			return nil, bad("tree %d: file ends in the expected values of its %d leaves", t, leaves)
		}
		means := make([]float64, leaves)
		for k := range means {
			means[k] = math.Float64frombits(le.Uint64(rest))
			rest = rest[8:]
			if !(means[k] > 0) || math.IsInf(means[k], 1) {
				return nil, bad("tree %d: leaf %d: expected value %g is not a positive number", t, k, means[k])
			}
		}
		e.Trees[t], e.Means[t] = tr, means
	}
	if len(rest) != 0 {
		return nil, bad("%d bytes after the last tree", len(rest))
	}
	enc := &Encoder{Use: use}
	for c := range enc.Vocab {
		enc.Vocab[c] = h.Vocab[c]
		seen := make(map[string]bool, len(h.Vocab[c]))
		for _, v := range h.Vocab[c] {
			if seen[v] {
				return nil, bad("vocabulary of %s lists %q twice", catNames[c], v)
			}
			seen[v] = true
		}
	}
	enc.buildIndex()
	leaf := LeafMedian
	if h.Config.Leaf == LeafMean.String() {
		leaf = LeafMean
	}
	cfg := TrainConfig{FailWeight: h.Config.FailWeight, Residual: h.Config.Residual, Forest: ForestParams{Trees: h.Trees, MaxDepth: h.Config.MaxDepth,
		MinSamplesLeaf: h.Config.MinSamplesLeaf, MaxFeatures: h.Config.MaxFeatures, MaxSamples: h.Config.MaxSamples, Bins: h.Config.Bins, Leaf: leaf,
		Quantile: h.Quantile, Seed: h.Config.Seed}}
	return &Model{Encoder: enc, Forest: e, Config: cfg, TrainRows: h.TrainRows}, nil
}

// checkSchema compares a file's feature schema with this build's: the
// features of schema 1, then the columns of any of the optional features,
// in order and each feature whole. It returns which optional features the
// file's model uses.
func checkSchema(h *fileHeader) (use [NumOpt]bool, err error) {
	var diffs []string
	if h.SchemaVersion != SchemaVersion {
		diffs = append(diffs, fmt.Sprintf("schema version %d in the file, %d in this build", h.SchemaVersion, SchemaVersion))
	}
	want := FeatureNames()
	if len(h.Features) < len(want) || len(h.Features) > len(want)+len(optColumns) {
		diffs = append(diffs, fmt.Sprintf("%d features in the file, %d in this build (%d with every optional feature)", len(h.Features), len(want), len(want)+len(optColumns)))
	}
	for i := 0; i < min(len(want), len(h.Features)); i++ {
		if h.Features[i] != want[i] {
			diffs = append(diffs, fmt.Sprintf("feature %d is %q in the file, %q in this build", i, h.Features[i], want[i]))
			if len(diffs) >= 6 {
				break
			}
		}
	}
	if len(diffs) == 0 {
		var got [NumOpt]int
		next := 0 // the optional columns come in optColumns order
		for i := len(want); i < len(h.Features); i++ {
			k := next
			for k < len(optColumns) && optColumns[k].name != h.Features[i] {
				k++
			}
			if k == len(optColumns) {
				diffs = append(diffs, fmt.Sprintf("feature %d is %q in the file, not an optional feature of this build after %q", i, h.Features[i], h.Features[i-1]))
				break
			}
			use[optColumns[k].opt], next = true, k+1
			got[optColumns[k].opt]++
		}
		for _, c := range optColumns {
			if use[c.opt] {
				got[c.opt]--
			}
		}
		for k, n := range got {
			if n != 0 {
				diffs = append(diffs, fmt.Sprintf("optional feature %d has only some of its columns in the file", k))
			}
		}
	}
	if len(h.Vocab) != NumCat {
		diffs = append(diffs, fmt.Sprintf("%d categorical vocabularies in the file, %d in this build", len(h.Vocab), NumCat))
	}
	if len(diffs) > 0 {
		return use, fmt.Errorf("%w: %w: %s", ErrModelFile, ErrSchema, strings.Join(diffs, "; "))
	}
	return use, nil
}

// checkTree checks the preorder subtree at i of depth d, whose first leaf
// is leaf *leaves of the tree, and returns the index after it; *leaves
// becomes the number of leaves up to its end.
func checkTree(t tree, i, d, nf int, leaves *int) (int, error) {
	if i >= len(t) {
		return 0, fmt.Errorf("node %d: child index past the end", i)
	}
	if d > maxFileDepth {
		return 0, fmt.Errorf("node %d: deeper than %d", i, maxFileDepth)
	}
	n := t[i]
	if n.Feat < 0 {
		if n.Feat != -1 || math.IsNaN(n.Thr) || math.IsInf(n.Thr, 0) {
			return 0, fmt.Errorf("node %d: bad leaf (feature %d, value %g)", i, n.Feat, n.Thr)
		}
		if int(n.Right) != *leaves {
			return 0, fmt.Errorf("node %d: leaf index %d, want %d", i, n.Right, *leaves)
		}
		*leaves++
		return i + 1, nil
	}
	if int(n.Feat) >= nf || math.IsNaN(n.Thr) || math.IsInf(n.Thr, 1) {
		return 0, fmt.Errorf("node %d: bad split (feature %d, threshold %g)", i, n.Feat, n.Thr)
	}
	end, err := checkTree(t, i+1, d+1, nf, leaves)
	if err != nil {
		return 0, err
	}
	if int(n.Right) != end {
		return 0, fmt.Errorf("node %d: right child %d, want %d", i, n.Right, end)
	}
	return checkTree(t, end, d+1, nf, leaves)
}
