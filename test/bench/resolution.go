package bench

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/loadout-dev/loadout/internal/resources"
)

// PiPackage is the npm package whose resource loader is the resolution baseline.
const PiPackage = "@mariozechner/pi-coding-agent"

//go:embed pi/load.mjs
var piScript []byte

// WriteTree writes 3 roots of n skills in the layout of the
// internal/resources benchmarks (root<i>/skills/skill-NNNNN/SKILL.md with
// frontmatter, plus ref.md), which is also Pi's layout: a skills directory
// of <name>/SKILL.md whose frontmatter name equals the directory name. The
// same names appear in every root, so two thirds are shadowed (Loadout) or
// collide (Pi). It returns the three root directories.
func WriteTree(base string, n int) ([]string, error) {
	var roots []string
	for r := range 3 {
		root := filepath.Join(base, fmt.Sprintf("root%d", r))
		for i := range n {
			dir := filepath.Join(root, "skills", fmt.Sprintf("skill-%05d", i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			md := fmt.Sprintf("---\nname: skill-%05d\ndescription: Skill %d of root %d, for benchmarks.\n---\n# Skill %d\n\nDo the thing carefully.\n", i, i, r, i)
			if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(dir, "ref.md"), []byte("Reference material.\n"), 0o644); err != nil {
				return nil, err
			}
		}
		roots = append(roots, root)
	}
	return roots, nil
}

// LoadoutResolve is one pass of what BenchmarkResolveRender measures: load
// the three directory roots (read, parse, validate) and Publish (resolve,
// activate, render, encode, hash). It returns the number of winning skills.
func LoadoutResolve(roots []string) (int, error) {
	in := resources.Input{Activate: []resources.Activation{{Skill: "skill-00000", Files: []string{"ref.md"}}}}
	for i, d := range roots {
		root, _, err := resources.LoadDirRoot(fmt.Sprintf("root%d", i), d, resources.DirOptions{})
		if err != nil {
			return 0, err
		}
		in.Roots = append(in.Roots, root)
	}
	res, err := resources.Publish(in)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range res.Manifest.Catalog {
		if e.Kind == resources.KindSkill {
			n++
		}
	}
	return n, nil
}

// ReadOnly walks the roots and reads every file: the floor.
func ReadOnly(roots []string) (int, error) {
	total := 0
	for _, d := range roots {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			c, err := os.ReadFile(p)
			total += len(c)
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	return total, nil
}

// Median runs f iterations times (after one warm-up) and returns the median
// and minimum durations.
func Median(iterations int, f func() error) (median, minimum time.Duration, err error) {
	if err := f(); err != nil {
		return 0, 0, err
	}
	var ds []time.Duration
	for range max(1, iterations) {
		start := time.Now()
		if err := f(); err != nil {
			return 0, 0, err
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return ds[len(ds)/2], ds[0], nil
}

// PiResult is what load.mjs prints.
type PiResult struct {
	Version      string  `json:"version"`
	ColdMs       float64 `json:"coldMs"`
	WarmMedianMs float64 `json:"warmMedianMs"`
	WarmMinMs    float64 `json:"warmMinMs"`
	Skills       int     `json:"skills"`
	Diagnostics  int     `json:"diagnostics"`
	PromptBytes  int     `json:"promptBytes"`
}

// InstallPi installs PiPackage (version, or latest when empty) with npm into
// cacheDir, once, and returns the package directory.
func InstallPi(cacheDir, version string) (string, error) {
	pkgDir := filepath.Join(cacheDir, "node_modules", filepath.FromSlash(PiPackage))
	if _, err := os.Stat(filepath.Join(pkgDir, "package.json")); err == nil {
		return pkgDir, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(cacheDir, "package.json")); err != nil {
		if err := os.WriteFile(filepath.Join(cacheDir, "package.json"), []byte(`{"name":"loadout-bench-pi","private":true}`+"\n"), 0o644); err != nil {
			return "", err
		}
	}
	spec := PiPackage
	if version != "" {
		spec += "@" + version
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", spec)
	cmd.Dir = cacheDir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm install %s in %s: %w\n%s", spec, cacheDir, err, out.String())
	}
	return pkgDir, nil
}

// RunPi times Pi's DefaultResourceLoader on the roots' skills directories in
// a node process: one cold load and iterations-1 warm ones.
func RunPi(pkgDir string, roots []string, iterations int) (*PiResult, error) {
	script := filepath.Join(filepath.Dir(pkgDir), "..", "..", "loadout-bench-load.mjs")
	if err := os.WriteFile(script, piScript, 0o644); err != nil {
		return nil, err
	}
	args := []string{script, pkgDir, fmt.Sprint(iterations)}
	for _, r := range roots {
		args = append(args, filepath.Join(r, "skills"))
	}
	cmd := exec.Command("node", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("node %s: %w\n%s", script, err, stderr.String())
	}
	lines := bytes.Split(bytes.TrimSpace(stdout.Bytes()), []byte("\n"))
	var res PiResult
	if err := json.Unmarshal(lines[len(lines)-1], &res); err != nil {
		return nil, fmt.Errorf("parsing Pi output %q: %w", stdout.String(), err)
	}
	if res.Skills == 0 {
		return nil, errors.New("Pi loaded no skills")
	}
	return &res, nil
}

// ResolutionResult is one row of the resolution table.
type ResolutionResult struct {
	Skills        int // per root
	Winners       int
	Loadout, Read time.Duration // medians
	LoadoutMin    time.Duration
	Pi            *PiResult
	PiErr         error
}

// Resolution measures one tree size side by side: Loadout, read-only and Pi.
func Resolution(base string, n, iterations int, piDir string) (*ResolutionResult, error) {
	roots, err := WriteTree(filepath.Join(base, fmt.Sprintf("tree-%d", n)), n)
	if err != nil {
		return nil, err
	}
	r := &ResolutionResult{Skills: n}
	if r.Loadout, r.LoadoutMin, err = Median(iterations, func() error {
		r.Winners, err = LoadoutResolve(roots)
		return err
	}); err != nil {
		return nil, err
	}
	if r.Read, _, err = Median(iterations, func() error { _, err := ReadOnly(roots); return err }); err != nil {
		return nil, err
	}
	if piDir != "" {
		r.Pi, r.PiErr = RunPi(piDir, roots, iterations+1)
		if r.PiErr == nil && r.Pi.Skills != r.Winners {
			r.PiErr = fmt.Errorf("Pi loaded %d skills, Loadout %d winners: the trees differ", r.Pi.Skills, r.Winners)
		}
	}
	return r, nil
}
