package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// repoRoot is two levels above this package (test/docs).
const repoRoot = "../.."

// markdownFiles lists the project's own Markdown: installed packages
// (node_modules) and build output are not ours to check.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", ".git", "bin", "dist", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d Markdown files under %s: is the test running from test/docs?", len(files), repoRoot)
	}
	return files
}

var (
	// An inline link or image: [text](target) or ![alt](target "title").
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// A reference definition: [label]: target
	refLink    = regexp.MustCompile(`(?m)^\s*\[[^\]]+\]:\s+(\S+)`)
	codeFence  = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```")
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	headingRx  = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// stripCode removes fenced blocks and code spans: a link shown as code is an
// example, not a link.
func stripCode(text string) string {
	return codeSpan.ReplaceAllString(codeFence.ReplaceAllString(text, ""), "")
}

// links returns every link target in a Markdown text, code aside.
func links(text string) []string {
	text = stripCode(text)
	var out []string
	for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	for _, m := range refLink.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// slug is GitHub's anchor for a heading: lower case, punctuation dropped
// (hyphens and underscores kept), spaces to hyphens.
func slug(heading string) string {
	heading = codeSpanMarks.ReplaceAllString(heading, "$1")
	heading = linkText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_':
			b.WriteRune(r)
		case unicode.IsLetter(r), unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	codeSpanMarks = regexp.MustCompile("`([^`]*)`")
	linkText      = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// anchors returns the anchors a Markdown text defines: one per heading
// (repeated headings get -1, -2, … as GitHub numbers them) and explicit
// <a name> / <a id> tags.
func anchors(text string) map[string]bool {
	set := map[string]bool{}
	seen := map[string]int{}
	for _, m := range headingRx.FindAllStringSubmatch(codeFence.ReplaceAllString(text, ""), -1) {
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			set[s+"-"+strconv.Itoa(n)] = true
		} else {
			set[s] = true
		}
		seen[s]++
	}
	for _, m := range htmlAnchor.FindAllStringSubmatch(text, -1) {
		set[m[1]] = true
	}
	return set
}

// TestDocs_EveryRelativeLinkAndAnchorResolves follows every relative link
// in the project's Markdown to its file, and every #anchor to a heading of
// the file it names. External links (a scheme) are not fetched: the
// machines that run the tests have no internet.
func TestDocs_EveryRelativeLinkAndAnchorResolves(t *testing.T) {
	cache := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := cache[path]; ok {
			return a, nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := anchors(string(data))
		cache[path] = a
		return a, nil
	}
	checked := 0
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, file)
		for _, target := range links(string(data)) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: %s does not exist", rel, target, path)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			a, err := anchorsOf(dest)
			if err != nil {
				t.Errorf("%s: link %q: %v", rel, target, err)
				continue
			}
			if !a[anchor] {
				t.Errorf("%s: link %q: no heading in %s has the anchor #%s", rel, target, filepath.Base(dest), anchor)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d relative links: the link pattern no longer matches the docs", checked)
	}
}

func TestSlug_FollowsGitHub(t *testing.T) {
	for heading, want := range map[string]string{
		"Package map":                          "package-map",
		"`loadout preview --last-good`":        "loadout-preview---last-good",
		"Policy apart from content":            "policy-apart-from-content",
		"Claude Code (bound pod, default)":     "claude-code-bound-pod-default",
		"R-EXT-1: trust gates extensions":      "r-ext-1-trust-gates-extensions",
		"hostd's ledger & [OTLP](x.md) export": "hostds-ledger--otlp-export",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}
