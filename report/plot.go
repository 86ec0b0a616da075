package report

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/asrpt/asrpt/sim"
)

// maxCurvePoints bounds the points drawn per curve so that plots of million-
// job replays stay small.
const maxCurvePoints = 2000

// PlotJCTCDF writes the CDF of job completion times per policy (log-scaled
// time axis) to path; the format follows the extension (.svg, .png, .pdf).
func PlotJCTCDF(path string, results []*sim.Result) error {
	return savePlot(path, results, JCTCDFWriter)
}

// PlotQueue writes the number of pending jobs over time per policy to path.
func PlotQueue(path string, results []*sim.Result) error {
	return savePlot(path, results, QueueWriter)
}

func savePlot(path string, results []*sim.Result, writer func(string, []*sim.Result) (func(io.Writer) error, error)) error {
	w, err := writer(path, results)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, w)
}

// JCTCDFWriter returns what PlotJCTCDF writes to path, as a function
// writing the file's content (for a set of outputs written all or nothing).
func JCTCDFWriter(path string, results []*sim.Result) (func(io.Writer) error, error) {
	p := plot.New()
	p.Title.Text = "Job completion time CDF"
	p.X.Label.Text = "JCT (s)"
	p.Y.Label.Text = "fraction of jobs"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = false
	p.Legend.Left = false
	for i, r := range results {
		if len(r.Jobs) == 0 {
			continue
		}
		jct := make([]float64, len(r.Jobs))
		for k := range r.Jobs {
			jct[k] = math.Max(r.Jobs[k].JCT(), 1)
		}
		slices.Sort(jct)
		stride := max(1, len(jct)/maxCurvePoints)
		var pts plotter.XYs
		for k := 0; k < len(jct); k += stride {
			pts = append(pts, plotter.XY{X: jct[k], Y: float64(k+1) / float64(len(jct))})
		}
		pts = append(pts, plotter.XY{X: jct[len(jct)-1], Y: 1})
		if err := addLine(p, i, r.Policy, pts); err != nil {
			return nil, err
		}
	}
	return render(p, path)
}

// QueueWriter returns what PlotQueue writes to path, as a function writing
// the file's content.
func QueueWriter(path string, results []*sim.Result) (func(io.Writer) error, error) {
	p := plot.New()
	p.Title.Text = "Pending jobs over time"
	p.X.Label.Text = "time since first submit (h)"
	p.Y.Label.Text = "pending jobs"
	p.Legend.Top = true
	for i, r := range results {
		if len(r.Queue) == 0 {
			continue
		}
		t0 := r.Queue[0].Time
		stride := max(1, len(r.Queue)/maxCurvePoints)
		var pts plotter.XYs
		for k := 0; k < len(r.Queue); k += stride {
			pts = append(pts, plotter.XY{X: (r.Queue[k].Time - t0) / 3600, Y: float64(r.Queue[k].Pending)})
		}
		if err := addLine(p, i, r.Policy, pts); err != nil {
			return nil, err
		}
	}
	return render(p, path)
}

func addLine(p *plot.Plot, i int, name string, pts plotter.XYs) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("plot %s: %w", name, err)
	}
	l.Color = plotutil.Color(i)
	l.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
	l.Width = vg.Points(1.2)
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

// render returns a function writing p in the format of path's extension.
func render(p *plot.Plot, path string) (func(io.Writer) error, error) {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	switch ext {
	case "svg", "png", "pdf":
	default:
		return nil, fmt.Errorf("plot %s: unsupported format %q (svg, png or pdf)", path, ext)
	}
	w, err := p.WriterTo(8*vg.Inch, 5*vg.Inch, ext)
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", path, err)
	}
	return func(out io.Writer) error {
		_, err := w.WriteTo(out)
		return err
	}, nil
}

// PairedCDFWriter returns the plot of, per policy, the CDF of each job's
// JCT under it minus under base (hours; < 0: sooner than under the
// baseline), as a function writing the file's content. The baseline's own
// replay, and replays of other jobs, are left out.
func PairedCDFWriter(path string, results []*sim.Result, base *sim.Result) (func(io.Writer) error, error) {
	p := plot.New()
	p.Title.Text = "JCT difference against " + base.Policy + ", job by job"
	p.X.Label.Text = "JCT − JCT under " + base.Policy + " (h)"
	p.Y.Label.Text = "fraction of jobs"
	p.Legend.Top = false
	p.Legend.Left = false
	for i, r := range results {
		if r == base || len(r.Jobs) == 0 || len(r.Jobs) != len(base.Jobs) {
			continue
		}
		d := make([]float64, len(r.Jobs))
		for k := range r.Jobs {
			d[k] = (r.Jobs[k].JCT() - base.Jobs[k].JCT()) / 3600
		}
		slices.Sort(d)
		stride := max(1, len(d)/maxCurvePoints)
		var pts plotter.XYs
		for k := 0; k < len(d); k += stride {
			pts = append(pts, plotter.XY{X: d[k], Y: float64(k+1) / float64(len(d))})
		}
		pts = append(pts, plotter.XY{X: d[len(d)-1], Y: 1})
		if err := addLine(p, i, r.Policy, pts); err != nil {
			return nil, err
		}
	}
	return render(p, path)
}
