// Command benchpreview times real `loadout preview --root` processes on 3
// roots × N skills against reading every file once with cat, and against a
// second loadout binary (the version before Pi-parity discovery), side by
// side: the commands run interleaved, round after round, so that a loaded
// machine slows every one of them alike. hack/bench-preview.sh builds the
// binaries and runs it; docs/benchmarks.md ("Resolution") holds the results.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/loadout-dev/loadout/internal/skilldir/benchtree"
)

// command is one thing timed: argv run with stdout to /dev/null.
type command struct {
	label string
	argv  []string
	walls []time.Duration
	cpus  []time.Duration // user + system, children included
}

// alsoFlag collects -also label=binary: more loadout binaries to time the
// same preview with (say, one per commit of a series).
type alsoFlag []string

func (a *alsoFlag) String() string     { return strings.Join(*a, ",") }
func (a *alsoFlag) Set(v string) error { *a = append(*a, v); return nil }

// sample is one run's wall-clock and CPU time.
type sample struct {
	wall, cpu time.Duration
}

func main() {
	n := flag.Int("skills", 1000, "skills per root (3 roots, same names in every root)")
	rounds := flag.Int("rounds", 15, "interleaved rounds; each runs every command once")
	current := flag.String("current", "", "loadout binary built from the current tree")
	before := flag.String("before", "", "loadout binary built from the version to compare against (optional)")
	dir := flag.String("dir", "", "directory for the generated roots (default: a temporary one, removed afterwards)")
	var also alsoFlag
	flag.Var(&also, "also", "label=binary: another loadout to time preview --root with (repeatable)")
	flag.Parse()
	if *current == "" {
		fmt.Fprintln(os.Stderr, "benchpreview: -current is required")
		os.Exit(2)
	}
	if err := run(*n, *rounds, *current, *before, *dir, also); err != nil {
		fmt.Fprintln(os.Stderr, "benchpreview:", err)
		os.Exit(1)
	}
}

func run(n, rounds int, current, before, dir string, also []string) error {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "benchpreview-")
		if err != nil {
			return err
		}
		defer func() { _ = os.RemoveAll(tmp) }()
		dir = tmp
	}
	roots, err := benchtree.WriteTree(dir, n)
	if err != nil {
		return err
	}
	cmds, err := commands(roots, current, before, also)
	if err != nil {
		return err
	}
	if err := checkSameOutput(cmds); err != nil {
		return err
	}
	fmt.Printf("3 roots × %d skills in %s; %d interleaved rounds; load average at start: %s\n", n, dir, rounds, loadAverage())
	// One untimed round warms the page cache and the binaries.
	for _, c := range cmds {
		if _, err := timeOnce(c.argv); err != nil {
			return fmt.Errorf("%s: %w", c.label, err)
		}
	}
	for range rounds {
		for _, c := range cmds {
			s, err := timeOnce(c.argv)
			if err != nil {
				return fmt.Errorf("%s: %w", c.label, err)
			}
			c.walls = append(c.walls, s.wall)
			c.cpus = append(c.cpus, s.cpu)
		}
	}
	fmt.Printf("load average at end: %s\n\n", loadAverage())
	report(os.Stdout, cmds)
	return nil
}

// commands are the yardstick (cat of every file), the current binary's
// preview and start-up, the same for the binary compared against, and the
// preview of every -also binary. Every binary accepts these flags; the budget
// is lifted so that no output is refused.
func commands(roots []string, current, before string, also []string) ([]*command, error) {
	quoted := make([]string, len(roots))
	for i, r := range roots {
		quoted[i] = "'" + r + "'"
	}
	preview := func(bin string) []string {
		argv := []string{bin, "preview", "-o", "json", "--max-context-bytes", "0"}
		for _, r := range roots {
			argv = append(argv, "--root", r)
		}
		return argv
	}
	cmds := []*command{
		{label: "cat every file", argv: []string{"sh", "-c", "find " + strings.Join(quoted, " ") + " -type f -exec cat {} + >/dev/null"}},
		{label: "preview --root, current", argv: preview(current)},
	}
	if before != "" {
		cmds = append(cmds, &command{label: "preview --root, before", argv: preview(before)})
	}
	for _, a := range also {
		label, bin, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("-also %q: want label=binary", a)
		}
		cmds = append(cmds, &command{label: "preview --root, " + label, argv: preview(bin)})
	}
	cmds = append(cmds, &command{label: "loadout version, current", argv: []string{current, "version"}})
	if before != "" {
		cmds = append(cmds, &command{label: "loadout version, before", argv: []string{before, "version"}})
	}
	return cmds, nil
}

// checkSameOutput fails unless every binary prints the same preview: the
// comparison is only fair if they do the same work, and no change may alter
// the output.
func checkSameOutput(cmds []*command) error {
	var outputs [][]byte
	for _, c := range cmds {
		if !strings.HasPrefix(c.label, "preview") {
			continue
		}
		out, err := exec.Command(c.argv[0], c.argv[1:]...).Output()
		if err != nil {
			return fmt.Errorf("%s: %w", c.label, err)
		}
		outputs = append(outputs, out)
	}
	for _, o := range outputs[1:] {
		if string(o) != string(outputs[0]) {
			return errors.New("the binaries print different previews")
		}
	}
	return nil
}

// timeOnce runs argv once, stdout and stderr discarded, and returns its wall
// time and the CPU time of the process and the children it waited for.
func timeOnce(argv []string) (sample, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return sample{}, err
	}
	wall := time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return sample{}, errors.New("no rusage on this platform")
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return sample{wall: wall, cpu: cpu}, nil
}

func report(w io.Writer, cmds []*command) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "command\twall median\twall range\tCPU median\tCPU range\t")
	for _, c := range cmds {
		fmt.Fprintf(tw, "%s\t%s\t%s–%s\t%s\t%s–%s\t\n", c.label,
			ms(median(c.walls)), ms(slices.Min(c.walls)), ms(slices.Max(c.walls)),
			ms(median(c.cpus)), ms(slices.Min(c.cpus)), ms(slices.Max(c.cpus)))
	}
	_ = tw.Flush()
	cat := cmds[0]
	var before *command
	for _, c := range cmds {
		if c.label == "preview --root, before" {
			before = c
		}
	}
	fmt.Fprintln(w)
	for _, c := range cmds {
		if !strings.HasPrefix(c.label, "preview") {
			continue
		}
		fmt.Fprintf(w, "%s / cat: wall %.2f×, CPU %.2f×", c.label, ratio(c.walls, cat.walls), ratio(c.cpus, cat.cpus))
		if before != nil && c != before {
			fmt.Fprintf(w, "; / before: wall %.2f×, CPU %.2f×", ratio(c.walls, before.walls), ratio(c.cpus, before.cpus))
		}
		fmt.Fprintln(w)
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ratio(a, b []time.Duration) float64 {
	return float64(median(a)) / float64(median(b))
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// loadAverage is the first three fields of /proc/loadavg, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile(filepath.Join("/proc", "loadavg"))
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
