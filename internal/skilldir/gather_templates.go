package skilldir

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/skillmd"
)

// templates reads templates/<name>.md. Frontmatter is optional and only its
// description is used; without one the whole file is the body.
func (l *dirLoader) templates() ([]resources.Template, error) {
	entries, err := l.readDirOptional(templatesDirName)
	if err != nil {
		return nil, err
	}
	var out []resources.Template
	for _, e := range entries {
		rel := filepath.Join(templatesDirName, e.Name())
		if hidden(e.Name()) || e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		raw, err := l.readOptional(rel)
		if errors.Is(err, errReported) {
			continue
		}
		if err != nil {
			return nil, err
		}
		t, ok := l.template(rel, strings.TrimSuffix(e.Name(), ".md"), string(raw))
		if ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// template parses one template file; ok is false when it is skipped.
func (l *dirLoader) template(rel, name, content string) (resources.Template, bool) {
	body := strings.Trim(content, "\r\n")
	var description string
	if strings.HasPrefix(strings.TrimPrefix(content, "\ufeff"), "---") {
		fm, b, err := skillmd.Parse(content)
		if err != nil {
			l.report(rel, resources.SeveritySkipped, "%v", err)
			return resources.Template{}, false
		}
		body, description = b, string(fm.Description)
	}
	if strings.TrimSpace(body) == "" {
		l.report(rel, resources.SeveritySkipped, "empty template body")
		return resources.Template{}, false
	}
	if msg := skillmd.CheckName(name); msg != "" && !l.nameProblem(resources.KindTemplate, rel, fmt.Sprintf("name %q %s", name, msg)) {
		return resources.Template{}, false
	}
	return resources.Template{Name: name, Description: description, Body: body, Origin: l.origin(rel)}, true
}
