package shell

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// pathological are command lines of MaxInput bytes shaped to make a shell
// parser work hardest: dense words, statements, pipelines, deep nesting of
// every kind, brace expansion, nested command strings.
func pathological() map[string]string {
	// fill repeats unit to n bytes (MaxInput unless given).
	fill := func(unit string, n ...int) string {
		size := MaxInput
		if len(n) > 0 {
			size = n[0]
		}
		return strings.Repeat(unit, size/len(unit)+1)[:size]
	}
	deep := func(open, mid, closing string) string {
		n := (MaxInput - len(mid)) / (len(open) + len(closing))
		return strings.Repeat(open, n) + mid + strings.Repeat(closing, n)
	}
	bashC := "rm -rf x"
	for len(bashC) < MaxInput/4 {
		bashC = "bash -c " + quote(bashC) + " ; " + bashC
	}
	return map[string]string{
		"words":             fill("a "),
		"statements":        fill("a;"),
		"commands":          fill("a\n", 2*MaxCommands),
		"pipeline":          fill("a|", MaxTreeDepth-2) + "a",
		"long pipeline":     fill("a|", MaxInput-1) + "a",
		"and-list":          "a" + strings.Repeat("&&a", (MaxInput-1)/3),
		"subshells":         deep("(", "x", ")"),
		"arithmetic":        "echo $((" + deep("(", "1", ")")[:MaxInput-12] + "))",
		"substitutions":     deep("$(", "x", ")"),
		"quoted subst":      deep(`"$(`, "x", `)"`),
		"groups":            deep("{ ", "x;", " }"),
		"ifs":               deep("if a; then ", "x", "; fi"),
		"parameters":        deep("${a:-", "x", "}"),
		"braces":            "echo " + fill("{a,b}", MaxInput-5),
		"brace sequence":    "echo {1..99999999}",
		"nested braces":     "echo " + deep("{a,", "b", "}")[5:],
		"wrappers":          fill("sudo env nice timeout 1 nohup rm -rf x;"),
		"heredoc":           "cat <<'EOF'\n" + fill("some text (with [brackets] and {braces} | pipes\n", MaxInput-20) + "\nEOF\n",
		"nested bash -c":    bashC,
		"find -exec":        "find " + fill("-exec rm -rf {} ; ", MaxInput-5),
		"echo into a shell": "echo " + fill("rm -rf x; ", MaxInput-20) + " | sh",
	}
}

// TestCommands_HugeOrDeeplyNestedLinesStayBounded_RHK7: whatever its shape,
// a line of at most MaxInput bytes is answered (commands or an error) with a
// bounded stack and heap, well within a hook's time. Before the parser's
// recursion was capped, 64 KiB of "((((" took over a second and a 130 MB
// stack.
func TestCommands_HugeOrDeeplyNestedLinesStayBounded_RHK7(t *testing.T) {
	const maxStack, maxHeap = 8 << 20, 64 << 20
	for name, line := range pathological() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		done := make(chan struct{})
		var took time.Duration
		var n int
		var err error
		go func() { // a fresh goroutine, as each hostd request has: its stack starts small
			defer close(done)
			start := time.Now()
			var cmds []Command
			cmds, err = Commands(line)
			took, n = time.Since(start), len(cmds)
			runtime.ReadMemStats(&after) // before the stack is freed
		}()
		<-done
		stack := after.StackInuse - min(before.StackInuse, after.StackInuse)
		heap := after.TotalAlloc - before.TotalAlloc
		t.Logf("%-18s %6d bytes: %4d commands in %9v, stack +%5d KiB, allocated %6d KiB; err %v", name, len(line), n, took, stack>>10, heap>>10, err)
		if stack > maxStack || heap > maxHeap {
			t.Errorf("%s: stack grew %d KiB and %d KiB were allocated, over the bounds of %d and %d KiB", name, stack>>10, heap>>10, maxStack>>10, maxHeap>>10)
		}
		if took > 2*time.Second {
			t.Errorf("%s: took %v", name, took)
		}
	}
}

// TestCommands_BigLinesWaitForASlotSmallOnesNever: at most BigLines lines of
// BigLine bytes or more are parsed at once, so a flood of them costs a few
// parses' memory; a small line never waits.
func TestCommands_BigLinesWaitForASlotSmallOnesNever(t *testing.T) {
	for range BigLines {
		bigLines <- struct{}{} // every slot taken, as by parses in flight
	}
	big := "echo " + strings.Repeat("a ", BigLine/2)
	done := make(chan error, 1)
	go func() { _, err := Commands(big); done <- err }()
	if _, err := Commands("rm -rf x"); err != nil {
		t.Fatalf("small line: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("a big line was parsed while every slot was taken (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	<-bigLines // a parse in flight ends
	if err := <-done; err != nil {
		t.Fatalf("big line: %v", err)
	}
	for range BigLines - 1 {
		<-bigLines
	}
	if len(bigLines) != 0 {
		t.Fatalf("%d slots still held after every parse ended", len(bigLines))
	}
}

// TestCommandsIn_PowerShellHugeOrDeeplyNestedLinesStayBounded_RHK7: the
// PowerShell reader answers every pathological line, and PowerShell's own
// nesting (script blocks, subexpressions, here-strings), within a hook's
// time and a bounded heap.
func TestCommandsIn_PowerShellHugeOrDeeplyNestedLinesStayBounded_RHK7(t *testing.T) {
	var total uint64
	for name, line := range powerShellCorpus() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		cmds, err := CommandsIn(PowerShell, line)
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		heap := after.TotalAlloc - before.TotalAlloc
		t.Logf("%-22s %6d bytes: %4d commands in %9v, allocated %6d KiB; err %v", name, len(line), len(cmds), took, heap>>10, err)
		// Allocated in all, not held at once: the reader's garbage is short
		// lived.
		total += heap
		if (heap > 16<<20 && !raceEnabled) || took > 2*time.Second {
			t.Errorf("%s: %v, %d KiB", name, took, heap>>10)
		}
	}
	// The tokenizer streams and the walker stops at its command limit, so
	// the whole corpus allocates about 30 MiB (docs/benchmarks.md); the
	// fence leaves room for the garbage of other goroutines ReadMemStats
	// counts too.
	t.Logf("the corpus allocated %d MiB in all", total>>20)
	if total > 48<<20 && !raceEnabled {
		t.Errorf("the PowerShell reader allocated %d MiB over the corpus, want about 30", total>>20)
	}
}

// powerShellCorpus is the bash reader's pathological lines and PowerShell's
// own nesting (script blocks, subexpressions, here-strings), each of up to
// MaxInput bytes.
func powerShellCorpus() map[string]string {
	lines := pathological()
	deep := func(open, mid, closing string) string {
		n := (MaxInput - len(mid)) / (len(open) + len(closing))
		return strings.Repeat(open, n) + mid + strings.Repeat(closing, n)
	}
	lines["blocks"] = deep("& { ", "ri x -r", " }")
	lines["subexpressions"] = deep("$(", "x", ")")
	lines["quoted subexpressions"] = deep(`"$(`, "x", `)"`)
	lines["here-strings"] = strings.Repeat("@'\nx\n'@\n", MaxInput/8)
	lines["siblings"] = strings.Repeat("(a) ", MaxInput/4)
	lines["methods"] = strings.Repeat("$a.b(c).d(e) ", MaxInput/13)
	return lines
}
