package placement

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// Catalogue assumptions shared by every model; catalogue.md explains them.
const (
	// cnnFLOPS is the training throughput assumed for the convolutional
	// networks on one A100-class GPU with mixed precision, in FLOP/s.
	cnnFLOPS = 60e12
	// transformerFLOPS is the training throughput assumed for the
	// transformers on one A100-class GPU with mixed precision, in FLOP/s
	// (about 38% of the 312 TFLOP/s dense fp16 peak).
	transformerFLOPS = 120e12
	// stateBudget is the GPU memory in bytes that one GPU may spend on model
	// state (weights, gradients, optimizer state): half of a 40 GB A100.
	stateBudget = 20e9
	// gpusPerServer is the server size the pipeline rule assumes when it
	// adds stages as a job grows (one more power of two of stages per
	// doubling beyond one 8-GPU server).
	gpusPerServer = 8
)

// DefaultGradientBytes is the gradient size in bytes of the default
// data-parallel profile (design §1): ResNet-50's 25.6 M fp32 gradients. The
// sidecar gives it (see DataParallel) to a live job that names no profile.
// In a replay a trace job without a profile stays a plain job: it runs its
// recorded duration wherever it is placed and is communication-light
// (CommHeavy(nil) is false).
const DefaultGradientBytes = 25.557e6 * 4

// DataParallelModel is the Model name of DataParallel's profiles.
const DataParallelModel = "data-parallel"

// DataParallel returns the design's default profile for a job of gpus GPUs
// (≥ 1) whose model is not known: pure data parallel (K = 1, d = gpus),
// all-reducing gradientBytes per iteration, with the compute time of one
// ResNet-50 iteration of the catalogue (so that with DefaultGradientBytes
// it equals Lookup("resnet50", gpus) but for its name).
func DataParallel(gpus int, gradientBytes float64) *Profile {
	m := &catalogue[0] // resnet50
	return &Profile{Model: DataParallelModel, Stages: []Stage{{
		Replicas: max(gpus, 1),
		Compute:  m.flopsPerSample * m.batch / m.flops,
		Gradient: gradientBytes,
	}}}
}

// Known reports whether model names a catalogue model (case-insensitive).
func Known(model string) bool {
	name := strings.ToLower(strings.TrimSpace(model))
	for i := range catalogue {
		if catalogue[i].name == name {
			return true
		}
	}
	return false
}

// model is one catalogue entry: the inputs of the derivation in
// catalogue.md. Stage values are computed from them by profile.
type model struct {
	name string
	// params is the number of trainable parameters.
	params float64
	// flopsPerSample is the training (forward + backward) FLOPs for one
	// sample.
	flopsPerSample float64
	// batch is the number of samples one data-parallel pipeline copy
	// processes per iteration.
	batch float64
	// flops is the assumed achieved FLOP/s of one GPU.
	flops float64
	// gradBytes is the bytes per parameter of the all-reduced gradients.
	gradBytes float64
	// actBytes is the bytes per sample sent across a stage boundary in the
	// forward pass.
	actBytes float64
	// stateBytes is the bytes of model state per parameter (16 for
	// mixed-precision Adam: fp16 weights and gradients, fp32 master weights,
	// momentum and variance).
	stateBytes float64
	// maxStages is the largest pipeline depth the model is split into.
	maxStages int
}

var catalogue = []model{
	{
		name:           "resnet50",
		params:         25.557e6,
		flopsPerSample: 3 * 2 * 4.11e9, // 4.11 GMAC forward at 224², backward ≈ 2× forward
		batch:          256,
		flops:          cnnFLOPS,
		gradBytes:      4,
		stateBytes:     16,
		maxStages:      1,
	},
	{
		name:           "vgg16",
		params:         138.358e6,
		flopsPerSample: 3 * 2 * 15.47e9,
		batch:          128,
		flops:          cnnFLOPS,
		gradBytes:      4,
		stateBytes:     16,
		maxStages:      1,
	},
	{
		name:           "inception-v3",
		params:         27.161e6,       // with the auxiliary classifier
		flopsPerSample: 3 * 2 * 5.71e9, // at 299²
		batch:          128,
		flops:          cnnFLOPS,
		gradBytes:      4,
		stateBytes:     16,
		maxStages:      1,
	},
	{
		name:   "bert-large",
		params: 335.1e6,
		// 6·N per token plus 6·L·s·h attention, s = 128 tokens:
		flopsPerSample: 128 * (6*335.1e6 + 6*24*128*1024),
		batch:          32,
		flops:          transformerFLOPS,
		gradBytes:      2,
		actBytes:       128 * 1024 * 2, // s·h fp16
		stateBytes:     16,
		maxStages:      4,
	},
	{
		name:           "gpt2-1.5b",
		params:         1.558e9,
		flopsPerSample: 1024 * (6*1.558e9 + 6*48*1024*1600),
		batch:          2,
		flops:          transformerFLOPS,
		gradBytes:      2,
		actBytes:       1024 * 1600 * 2,
		stateBytes:     16,
		maxStages:      8,
	},
	{
		name:   "t5-large",
		params: 737.67e6,
		// encoder (half the parameters) over 512 input tokens, decoder over
		// 128 target tokens:
		flopsPerSample: 6 * (737.67e6 / 2) * (512 + 128),
		batch:          8,
		flops:          transformerFLOPS,
		gradBytes:      2,
		actBytes:       (512 + 128) * 1024 * 2, // decoder stages carry the encoder output too
		stateBytes:     16,
		maxStages:      8,
	},
}

// Models returns the catalogue's model names, sorted.
func Models() []string {
	names := make([]string, len(catalogue))
	for i, m := range catalogue {
		names[i] = m.name
	}
	slices.Sort(names)
	return names
}

// minStages is the smallest power of two K such that one GPU holds 1/K of
// the model state within stateBudget.
func (m *model) minStages() int {
	k := 1
	for m.stateBytes*m.params/float64(k) > stateBudget {
		k *= 2
	}
	return k
}

// stages returns the pipeline depth K for g GPUs (the rule in catalogue.md):
//
//	K = min(maxStages, 2^v(g), max(Kmem, 2^⌊log₂(g/8)⌋))
//
// where 2^v(g) is the largest power of two dividing g and Kmem the smallest
// power of two of stages that fits the model state. It returns 0 when g
// admits no K ≥ Kmem.
func (m *model) stages(g int) int {
	kmem := m.minStages()
	grow := 1
	if g >= 2*gpusPerServer {
		grow = 1 << (bits.Len(uint(g/gpusPerServer)) - 1)
	}
	k := min(m.maxStages, 1<<bits.TrailingZeros(uint(g)), max(kmem, grow))
	if k < kmem {
		return 0
	}
	return k
}

func (m *model) profile(g int) *Profile {
	K := m.stages(g)
	d := g / K
	total := m.flopsPerSample * m.batch / m.flops
	p := &Profile{Model: m.name, Stages: make([]Stage, K)}
	for k := range p.Stages {
		s := Stage{
			Replicas: d,
			Compute:  total / float64(K),
			Gradient: m.gradBytes * m.params / float64(K),
		}
		if k+1 < K {
			s.Activation = m.actBytes * m.batch * float64(d)
		}
		p.Stages[k] = s
	}
	return p
}

// Lookup returns the catalogue profile of model (case-insensitive, e.g.
// "gpt2-1.5b") trained on gpus GPUs, with the pipeline depth K and the
// uniform data-parallel width d = gpus/K chosen by the rule documented in
// catalogue.md. The result is a fresh copy the caller may change. The error
// names the known models, or the GPU counts the model accepts.
func Lookup(model string, gpus int) (*Profile, error) {
	name := strings.ToLower(strings.TrimSpace(model))
	for i := range catalogue {
		m := &catalogue[i]
		if m.name != name {
			continue
		}
		if gpus < 1 {
			return nil, fmt.Errorf("placement: model %q on %d GPUs: want at least 1 GPU", name, gpus)
		}
		if m.stages(gpus) == 0 {
			k := m.minStages()
			return nil, fmt.Errorf("placement: model %q on %d GPUs: its model state needs %d pipeline stages, so the GPU count must be a multiple of %d",
				name, gpus, k, k)
		}
		return m.profile(gpus), nil
	}
	return nil, fmt.Errorf("placement: unknown model %q (known: %s)", model, strings.Join(Models(), ", "))
}
