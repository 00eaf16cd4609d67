package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"time"
)

// palette colours series: configurations in the comparison plots, queues in a
// configuration's plot.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"}

func color(i int) string { return palette[i%len(palette)] }

// chart draws one plot as an SVG element: axes with ticks, then series. Coordinates are in
// the data's units; the chart maps them into its plot area.
type chart struct {
	b                     strings.Builder
	id                    string
	w, h                  float64
	left, right, top, bot float64
	x0, x1, y0, y1        float64
	xTicks, yTicks        []tick
	xLabel, yLabel, title string
	legend                []legendItem
}

type tick struct {
	at    float64
	label string
}

type legendItem struct {
	label, color string
	dashed       bool
}

func newChart(id, title string, w, h float64) *chart {
	return &chart{id: id, title: title, w: w, h: h, left: 64, right: 16, top: 46, bot: 44}
}

// f formats a coordinate to one decimal.
func f(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

func (c *chart) px(v float64) float64 {
	if c.x1 == c.x0 {
		return c.left
	}
	return c.left + (v-c.x0)/(c.x1-c.x0)*(c.w-c.left-c.right)
}

func (c *chart) py(v float64) float64 {
	if c.y1 == c.y0 {
		return c.h - c.bot
	}
	return c.h - c.bot - (v-c.y0)/(c.y1-c.y0)*(c.h-c.top-c.bot)
}

// open writes the SVG's start, the title, the grid and the axes.
func (c *chart) open() {
	fmt.Fprintf(&c.b, `<svg class="plot" id="%s" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">`,
		html.EscapeString(c.id), f(c.w), f(c.h), f(c.w), f(c.h), html.EscapeString(c.title))
	fmt.Fprintf(&c.b, `<text class="title" x="%s" y="18">%s</text>`, f(c.left), html.EscapeString(c.title))
	for _, t := range c.yTicks {
		y := c.py(t.at)
		fmt.Fprintf(&c.b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f(c.left), f(y), f(c.w-c.right), f(y))
		fmt.Fprintf(&c.b, `<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`, f(c.left-6), f(y+4), html.EscapeString(t.label))
	}
	for _, t := range c.xTicks {
		x := c.px(t.at)
		fmt.Fprintf(&c.b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f(x), f(c.top), f(x), f(c.h-c.bot))
		fmt.Fprintf(&c.b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`, f(x), f(c.h-c.bot+16), html.EscapeString(t.label))
	}
	fmt.Fprintf(&c.b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f(c.left), f(c.h-c.bot), f(c.w-c.right), f(c.h-c.bot))
	fmt.Fprintf(&c.b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f(c.left), f(c.top), f(c.left), f(c.h-c.bot))
	if c.xLabel != "" {
		fmt.Fprintf(&c.b, `<text class="label" x="%s" y="%s" text-anchor="middle">%s</text>`, f((c.left+c.w-c.right)/2), f(c.h-6), html.EscapeString(c.xLabel))
	}
	if c.yLabel != "" {
		fmt.Fprintf(&c.b, `<text class="label" transform="translate(14 %s) rotate(-90)" text-anchor="middle">%s</text>`, f((c.top+c.h-c.bot)/2), html.EscapeString(c.yLabel))
	}
}

// line draws a polyline through the points.
func (c *chart) line(xs, ys []float64, color string, dashed bool) {
	if len(xs) == 0 {
		return
	}
	var pts strings.Builder
	for i := range xs {
		if i > 0 {
			pts.WriteByte(' ')
		}
		pts.WriteString(f(c.px(xs[i])) + "," + f(c.py(ys[i])))
	}
	dash := ""
	if dashed {
		dash = ` stroke-dasharray="5 3"`
	}
	fmt.Fprintf(&c.b, `<polyline class="series" fill="none" stroke="%s" stroke-width="1.6"%s points="%s"/>`, color, dash, pts.String())
}

// bar draws a bar from y0 to y at [x, x+w).
func (c *chart) bar(x, w, y float64, color, title string) {
	top, base := c.py(y), c.py(c.y0)
	fmt.Fprintf(&c.b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
		f(c.px(x)), f(top), f(c.px(x+w)-c.px(x)), f(math.Max(base-top, 0)), color, html.EscapeString(title))
}

// close writes the legend (a row under the title, wrapping when it is full) and the SVG's
// end, and returns the SVG.
func (c *chart) close() string {
	x, y := c.left, 34.0
	for _, it := range c.legend {
		width := 30 + 6.5*float64(len([]rune(it.label)))
		if x+width > c.w-c.right && x > c.left {
			x, y = c.left, y+12
		}
		dash := ""
		if it.dashed {
			dash = ` stroke-dasharray="5 3"`
		}
		fmt.Fprintf(&c.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2.5"%s/>`, f(x), f(y-4), f(x+16), f(y-4), it.color, dash)
		fmt.Fprintf(&c.b, `<text class="legend" x="%s" y="%s">%s</text>`, f(x+20), f(y), html.EscapeString(it.label))
		x += width
	}
	c.b.WriteString(`</svg>`)
	return c.b.String()
}

// niceTicks returns about n round ticks covering [lo, hi].
func niceTicks(lo, hi float64, n int, format func(float64) string) []tick {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, tick{at: v, label: format(v)})
	}
	return out
}

// timeTicks returns about n ticks over [0, span] at round durations.
func timeTicks(span time.Duration, n int) []tick {
	steps := []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second,
		30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
		3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 2 * 24 * time.Hour, 7 * 24 * time.Hour, 14 * 24 * time.Hour}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if span <= s*time.Duration(n) {
			step = s
			break
		}
	}
	for span > step*time.Duration(n) {
		step *= 2
	}
	var out []tick
	for t := time.Duration(0); t <= span; t += step {
		out = append(out, tick{at: t.Seconds(), label: shortDuration(t)})
	}
	return out
}

// shortDuration formats a duration briefly: 0, 45s, 12m, 3h, 2d, 1d12h.
func shortDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		if d%time.Hour != 0 {
			return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
		}
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	days := int(d / (24 * time.Hour))
	if rest := d % (24 * time.Hour); rest >= time.Hour {
		return fmt.Sprintf("%dd%dh", days, int(rest.Hours()))
	}
	return fmt.Sprintf("%dd", days)
}

// humanSeconds formats seconds briefly for tables: 42s, 3.5m, 2.1h, 1.2d.
func humanSeconds(s float64) string {
	switch {
	case s < 60:
		return strconv.FormatFloat(math.Round(s*10)/10, 'f', -1, 64) + "s"
	case s < 3600:
		return strconv.FormatFloat(math.Round(s/6)/10, 'f', -1, 64) + "m"
	case s < 86400:
		return strconv.FormatFloat(math.Round(s/360)/10, 'f', -1, 64) + "h"
	}
	return strconv.FormatFloat(math.Round(s/8640)/10, 'f', -1, 64) + "d"
}
