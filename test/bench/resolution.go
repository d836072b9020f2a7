package bench

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/loadout-dev/loadout/internal/skilldir/benchtree"
)

// PiPackage is the npm package whose resource loader is the resolution baseline.
const PiPackage = "@mariozechner/pi-coding-agent"

//go:embed pi/load.mjs
var piScript []byte

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
		return nil, errors.New("the Pi agent loaded no skills")
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
	roots, err := benchtree.WriteTree(filepath.Join(base, fmt.Sprintf("tree-%d", n)), n)
	if err != nil {
		return nil, err
	}
	r := &ResolutionResult{Skills: n}
	if r.Loadout, r.LoadoutMin, err = Median(iterations, func() error {
		r.Winners, err = benchtree.LoadoutResolve(roots)
		return err
	}); err != nil {
		return nil, err
	}
	if r.Read, _, err = Median(iterations, func() error { _, err := benchtree.ReadOnly(roots); return err }); err != nil {
		return nil, err
	}
	if piDir != "" {
		r.Pi, r.PiErr = RunPi(piDir, roots, iterations+1)
		if r.PiErr == nil && r.Pi.Skills != r.Winners {
			r.PiErr = fmt.Errorf("the Pi agent loaded %d skills, Loadout %d winners: the trees differ", r.Pi.Skills, r.Winners)
		}
	}
	return r, nil
}
