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
