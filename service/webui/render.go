package webui

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/sluice-sched/sluice/service"
)

// pages holds one template set per page: the layout and the page's "content".
type pages struct {
	sets map[string]*template.Template
}

// mustParsePages parses every page template with the layout; it panics on an error (the
// templates are embedded: an error is a build defect).
func mustParsePages() *pages {
	names, err := fs.Glob(assets, "templates/*.html")
	if err != nil {
		panic(err)
	}
	p := &pages{sets: map[string]*template.Template{}}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "layout" || name == "partials" {
			continue
		}
		p.sets[name] = template.Must(template.New("layout.html").ParseFS(assets, "templates/layout.html", "templates/partials.html", n))
	}
	return p
}

// layoutData is what the layout sees.
type layoutData struct {
	Title    string
	Cluster  string
	Section  string
	Identity string
	// Refresh is the live refresh period in seconds (0: none).
	Refresh int
	Path    string
	Nav     []navLink
	Data    any
}

type navLink struct {
	Name, Link string
	Current    bool
}

// render writes a page; a template error becomes a 500.
func (u *UI) render(w http.ResponseWriter, code int, v *view, id *service.Identity) {
	set, ok := u.pages.sets[v.template]
	if !ok {
		http.Error(w, "no template "+v.template, http.StatusInternalServerError)
		return
	}
	d := layoutData{Title: v.title, Cluster: v.cluster, Section: v.template, Data: v.data}
	if id != nil {
		d.Identity = id.Name
	}
	if u.refresh > 0 && code == http.StatusOK && v.template != "login" && v.template != "config" {
		d.Refresh = max(1, int(u.refresh.Seconds()))
	}
	if v.cluster != "" {
		for _, s := range []struct{ name, section string }{
			{"Overview", ""}, {"Queues", "queues"}, {"Jobs", "jobs"}, {"Nodes", "nodes"}, {"Plans", "plans"}, {"Config", "config"},
		} {
			l := link(nil, "c", v.cluster, s.section)
			if s.section == "" {
				l = link(nil, "c", v.cluster) + "/"
			}
			cur := strings.HasPrefix(v.template, strings.TrimSuffix(s.section, "s")) && s.section != ""
			d.Nav = append(d.Nav, navLink{Name: s.name, Link: l, Current: cur})
		}
	}
	var buf bytes.Buffer
	if err := set.Execute(&buf, d); err != nil {
		u.log.Error("web UI template failed", "template", v.template, "error", err.Error())
		http.Error(w, fmt.Sprintf("rendering %s failed", v.template), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = buf.WriteTo(w)
}
