package web

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
)

var funcs = template.FuncMap{
	"ago":       ago,
	"clock":     clock,
	"span":      func(from, to time.Time) string { return to.Sub(from).Round(time.Second).String() },
	"when":      func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
	"rfc3339":   func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") },
	"sparkline": sparkline,
	"plot":      plot,
	"timeline":  timelineSVG,
	"lower":     strings.ToLower,
	"deref":     func(p *int64) int64 { return *p },
	"query":     url.QueryEscape,
	"path":      url.PathEscape,
	"num":       fmtNum,
	"count":     english.Count,
	"problems":  func() []string { return []string{StatusFailed, StatusReset, StatusRewound, StatusGap, StatusStalled} },
}

// ago says how long before now t was, coarsely.
func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm ago", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// clock writes t short: the time alone when it is today (UTC).
func clock(t time.Time) string {
	t = t.UTC()
	if t.Format("2006-01-02") == time.Now().UTC().Format("2006-01-02") {
		return t.Format("15:04:05")
	}
	return t.Format("Jan 02 15:04")
}

// scale maps a time span and a value range onto a box.
type scale struct {
	from, to     time.Time
	lo, hi       float64
	x0, w, y0, h float64
}

func (s scale) x(t time.Time) float64 {
	span := s.to.Sub(s.from).Seconds()
	if span <= 0 {
		return s.x0
	}
	f := t.Sub(s.from).Seconds() / span
	return s.x0 + math.Max(0, math.Min(1, f))*s.w
}

func (s scale) y(v float64) float64 {
	if s.hi <= s.lo {
		return s.y0 + s.h/2
	}
	return s.y0 + s.h - (v-s.lo)/(s.hi-s.lo)*s.h
}

func valueRange(pts []Point, extra ...float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		lo, hi = math.Min(lo, p.V), math.Max(hi, p.V)
	}
	for _, v := range extra {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if math.IsInf(lo, 0) {
		return 0, 1
	}
	if lo == hi { // a flat line sits in the middle of a range around it
		pad := math.Max(1, math.Abs(lo)*0.05)
		return lo - pad, hi + pad
	}
	return lo, hi
}

// stepPath is the SVG path of a step line through pts, held to end.
func stepPath(sc scale, pts []Point, end time.Time) string {
	var b strings.Builder
	for i, p := range pts {
		x, y := sc.x(p.T), sc.y(p.V)
		if i == 0 {
			fmt.Fprintf(&b, "M%.1f %.1f", x, y)
		} else {
			fmt.Fprintf(&b, "H%.1fV%.1f", x, y)
		}
	}
	if len(pts) > 0 {
		fmt.Fprintf(&b, "H%.1f", sc.x(end))
	}
	return b.String()
}

// sparkline is a row's progress over the window, 120×24.
func sparkline(pts []Point, from, to time.Time, status string) template.HTML {
	lo, hi := valueRange(pts)
	sc := scale{from: from, to: to, lo: lo, hi: hi, x0: 1, w: 118, y0: 2, h: 20}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="spark %s" width="120" height="24" viewBox="0 0 120 24" role="img" data-points="%d">`, strings.ToLower(status), len(pts))
	if len(pts) == 0 {
		b.WriteString(`<text x="60" y="16" text-anchor="middle" class="muted">no data</text></svg>`)
		return template.HTML(b.String())
	}
	fmt.Fprintf(&b, `<title>%s → %s over %s</title>`, fmtNum(pts[0].V), fmtNum(pts[len(pts)-1].V), to.Sub(from).Round(time.Minute))
	fmt.Fprintf(&b, `<path d="%s"/>`, stepPath(sc, pts, to))
	last := pts[len(pts)-1]
	fmt.Fprintf(&b, `<circle r="2" cx="%.1f" cy="%.1f"/></svg>`, sc.x(to), sc.y(last.V))
	return template.HTML(b.String())
}

// Plot geometry.
const (
	plotW, plotH = 760, 170
	padL, padR   = 78, 12
	padT, padB   = 10, 24
)

// plot is one partition's plot: its line, its points, the log end, the
// window's gaps and event flags.
func plot(pp PartitionPlot, from, to time.Time, events []snapshot.Event, gaps []Gap) template.HTML {
	var extra []float64
	if pp.LogEnd != nil {
		extra = append(extra, float64(*pp.LogEnd))
	}
	lo, hi := valueRange(pp.Points, extra...)
	sc := scale{from: from, to: to, lo: lo, hi: hi, x0: padL, w: plotW - padL - padR, y0: padT, h: plotH - padT - padB}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" viewBox="0 0 %d %d" role="img" data-partition="%s" data-field="%s">`,
		plotW, plotH, html.EscapeString(pp.Partition), html.EscapeString(pp.Field))
	axes(&b, sc, pp.Field != "changes")
	for _, g := range gaps {
		x1, x2 := sc.x(g.From), sc.x(g.To)
		fmt.Fprintf(&b, `<rect class="gap" x="%.1f" y="%d" width="%.1f" height="%.1f"><title>journal gap: %s</title></rect>`,
			x1, padT, math.Max(x2-x1, 2), sc.h, html.EscapeString(g.Reason))
	}
	if pp.LogEnd != nil && len(pp.Points) > 0 {
		last := pp.Points[len(pp.Points)-1]
		xe, ye, yc := sc.x(to), sc.y(float64(*pp.LogEnd)), sc.y(last.V)
		fmt.Fprintf(&b, `<path class="lag" d="M%.1f %.1fL%.1f %.1fL%.1f %.1fZ"><title>lag %d</title></path>`, sc.x(last.T), yc, xe, ye, xe, yc, *pp.Lag)
		fmt.Fprintf(&b, `<line class="logendline" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, sc.x0, xe, ye, ye)
		fmt.Fprintf(&b, `<circle class="logend" r="3.5" cx="%.1f" cy="%.1f"><title>log end %d</title></circle>`, xe, ye, *pp.LogEnd)
	}
	if len(pp.Points) > 0 {
		fmt.Fprintf(&b, `<path class="line" d="%s"/>`, stepPath(sc, pp.Points, to))
	}
	for _, p := range pp.Points {
		fmt.Fprintf(&b, `<circle class="pt" r="2.5" cx="%.1f" cy="%.1f" data-t="%s" data-v="%s"><title>%s  %s = %s</title></circle>`,
			sc.x(p.T), sc.y(p.V), p.T.Format(time.RFC3339), fmtNum(p.V), p.T.Format("15:04:05"), html.EscapeString(pp.Field), fmtNum(p.V))
	}
	markers(&b, sc, pp)
	for _, ev := range events {
		flag(&b, sc, ev)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// markers draws a source partition's changes (ticks) and tombstones.
func markers(b *strings.Builder, sc scale, pp PartitionPlot) {
	if pp.Field != "changes" {
		return
	}
	for _, t := range pp.Changes {
		fmt.Fprintf(b, `<line class="change" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"><title>offset written %s</title></line>`,
			sc.x(t), sc.x(t), sc.y0+sc.h*0.25, sc.y0+sc.h*0.75, t.Format("15:04:05"))
	}
	for _, t := range pp.Removed {
		fmt.Fprintf(b, `<line class="removed" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"><title>tombstone %s</title></line>`,
			sc.x(t), sc.x(t), sc.y0, sc.y0+sc.h, t.Format("15:04:05"))
	}
}

// flag marks an event on the time axis.
func flag(b *strings.Builder, sc scale, ev snapshot.Event) {
	x := sc.x(ev.Time)
	fmt.Fprintf(b, `<g class="flag %s" data-kind="%s" data-t="%s"><line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`+
		`<path d="M%.1f %.1fh9l-3 4 3 4h-9z"/><title>%s %s: %s; just before: %s (click to plan the restore that puts them back)</title></g>`,
		eventStatusClass(ev.Kind), ev.Kind, ev.Time.Format(time.RFC3339), x, x, sc.y0, sc.y0+sc.h, x, sc.y0,
		html.EscapeString(ev.Kind), ev.Time.Format("15:04:05"), english.Count(ev.Count, "offset", "offsets"), restore.FormatMoment(ev.Before))
}

func eventStatusClass(kind string) string { return strings.ToLower(eventStatus(kind)) }

// axes draws the frame, time ticks and, when values, the value range.
func axes(b *strings.Builder, sc scale, values bool) {
	fmt.Fprintf(b, `<rect class="frame" x="%.0f" y="%.0f" width="%.0f" height="%.0f"/>`, sc.x0, sc.y0, sc.w, sc.h)
	ts, layout := ticks(sc.from, sc.to)
	for _, t := range ts {
		x := sc.x(t)
		fmt.Fprintf(b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f"/><text class="tick" x="%.1f" y="%.0f" text-anchor="middle">%s</text>`,
			x, x, sc.y0, sc.y0+sc.h, x, sc.y0+sc.h+15, t.Format(layout))
	}
	if values {
		fmt.Fprintf(b, `<text class="tick" x="%.0f" y="%.0f" text-anchor="end">%s</text>`, sc.x0-6, sc.y0+9, short(sc.hi))
		fmt.Fprintf(b, `<text class="tick" x="%.0f" y="%.0f" text-anchor="end">%s</text>`, sc.x0-6, sc.y0+sc.h, short(sc.lo))
	}
}

// ticks are round times across [from, to], at most eight of them, and
// the layout of their labels.
func ticks(from, to time.Time) ([]time.Time, string) {
	span := to.Sub(from)
	step := 24 * time.Hour
	for _, s := range []time.Duration{time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute,
		15 * time.Minute, 30 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour} {
		if span/s <= 8 {
			step = s
			break
		}
	}
	layout := "15:04"
	if step < time.Minute {
		layout = "15:04:05"
	}
	var out []time.Time
	for t := from.Truncate(step).Add(step); t.Before(to); t = t.Add(step) {
		out = append(out, t)
	}
	return out, layout
}

// short writes a value in at most about seven characters.
func short(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e12:
		return fmt.Sprintf("%.3gT", v/1e12)
	case a >= 1e9:
		return fmt.Sprintf("%.3gG", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmtNum(math.Round(v*100) / 100)
}

// Timeline geometry.
const (
	tlW, tlH = 1100, 150
	tlPadL   = 90
)

// timelineSVG draws snapshots, epochs, gaps and events on one axis; every
// mark links to the restore plan of its moment.
func timelineSVG(t *Timeline) template.HTML {
	sc := scale{from: t.From, to: t.Now, x0: tlPadL, w: tlW - tlPadL - 12, y0: 8, h: tlH - 8 - 26}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="timeline" viewBox="0 0 %d %d" role="img">`, tlW, tlH)
	axes(&b, sc, false)
	lane := func(y float64, label string) {
		fmt.Fprintf(&b, `<text class="lane" x="%d" y="%.0f" text-anchor="end">%s</text>`, tlPadL-8, y+4, label)
	}
	lane(30, "snapshots")
	lane(62, "journal")
	lane(94, "resets")
	for _, s := range t.Snapshots {
		x := sc.x(s.CreatedAt)
		cls, pin := s.Kind, ""
		if s.Pin != nil {
			cls, pin = cls+" pinned", ", pinned"
			if s.Pin.Note != "" {
				pin += ": " + s.Pin.Note
			}
		}
		fmt.Fprintf(&b, `<a href="/timeline?at=%s"><g class="snap %s" data-id="%s"><line x1="%.1f" x2="%.1f" y1="20" y2="40"/><circle cx="%.1f" cy="30" r="4"/>`+
			`<title>%s snapshot %s, %s (%s)%s</title></g></a>`,
			url.QueryEscape(s.CreatedAt.Format(time.RFC3339Nano)), cls, s.ID, x, x, x, s.Kind, s.ID, s.Reason, english.Count(s.Connectors, "connector", "connectors"), html.EscapeString(pin))
	}
	for _, e := range t.Epochs {
		x1, x2 := sc.x(e.From), sc.x(e.To)
		if e.To.After(t.Now.Add(-snapshot.JournalLive)) && e.Broken == "" {
			x2 = sc.x(t.Now)
		}
		cls := "epoch"
		if e.Broken != "" {
			cls += " broken"
		}
		fmt.Fprintf(&b, `<rect class="%s" data-epoch="%s" x="%.1f" y="54" width="%.1f" height="16" rx="2"><title>epoch %s: %s to %s, %s %s</title></rect>`,
			cls, e.Epoch, x1, math.Max(x2-x1, 2), e.Epoch, e.From.Format(time.RFC3339), e.To.Format(time.RFC3339), english.Count(e.Segments, "segment", "segments"), html.EscapeString(e.Broken))
	}
	for _, g := range t.Gaps {
		x1, x2 := sc.x(g.From), sc.x(g.To)
		fmt.Fprintf(&b, `<rect class="gap" x="%.1f" y="50" width="%.1f" height="24"><title>journal gap %s to %s: %s</title></rect>`,
			x1, math.Max(x2-x1, 2), g.From.Format(time.RFC3339), g.To.Format(time.RFC3339), html.EscapeString(g.Reason))
	}
	for _, ev := range t.Events {
		x := sc.x(ev.Time)
		fmt.Fprintf(&b, `<a href="/timeline?at=%s&amp;connector=%s"><g class="flag %s" data-kind="%s" data-connector="%s"><line x1="%.1f" x2="%.1f" y1="84" y2="112"/><path d="M%.1f 84h11l-3 4 3 4h-11z"/>`+
			`<title>%s %s at %s (%s): click for the restore to just before</title></g></a>`,
			url.QueryEscape(ev.Before.Format(time.RFC3339Nano)), url.QueryEscape(ev.Connector), eventStatusClass(ev.Kind), ev.Kind,
			html.EscapeString(ev.Connector), x, x, x, html.EscapeString(ev.Connector), ev.Kind, ev.Time.Format(time.RFC3339), english.Count(ev.Count, "offset", "offsets"))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
