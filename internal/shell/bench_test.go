package shell

import (
	"testing"
)

// BenchmarkCommands: the time per byte of Commands on typical lines and on
// the pathological shapes of MaxInput bytes; the CEL cost that
// shell.commands declares (internal/exthost) is derived from the worst.
func BenchmarkCommands(b *testing.B) {
	lines := pathological()
	lines["typical"] = "cd /work && grep -rn 'rm -rf' docs | head -20 && rm -rf build && git status --short"
	lines["bash -c"] = `bash -lc "set -e; make build && sudo rm -rf /tmp/x; find . -name '*.o' -exec rm -f {} +"`
	for _, name := range []string{"typical", "bash -c", "words", "statements", "long pipeline", "and-list", "heredoc", "wrappers", "nested bash -c", "echo into a shell", "find -exec"} {
		line := lines[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = Commands(line)
			}
		})
	}
}

// BenchmarkCommandsIn_PowerShellCorpus: one op reads every line of the
// PowerShell reader's pathological corpus (the bash shapes and PowerShell's
// own nesting, 64 KiB each); B/op is the reader's total allocation over the
// corpus (docs/benchmarks.md: 127 MiB before the tokenizer streamed, 30 MiB
// after).
func BenchmarkCommandsIn_PowerShellCorpus(b *testing.B) {
	lines := powerShellCorpus()
	b.ReportAllocs()
	for b.Loop() {
		for _, line := range lines {
			_, _ = CommandsIn(PowerShell, line)
		}
	}
}
